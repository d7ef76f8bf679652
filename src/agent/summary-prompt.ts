import { isAttached, type NewMessage, type UserBlock } from "../core/messages.js";
import { clipToolResult } from "../tools/clip-tool-result.js";
import type { SummaryPlan } from "./plan-summary.js";

/** What a summary call is told to do. */
export const SUMMARY_SYSTEM = [
  "You condense the earlier part of a conversation between a user and an AI assistant that uses tools, so that the assistant can go on without it.",
  "Keep what the assistant will still need: the facts learnt (figures, names, ids, file paths, URLs, dates), the decisions made and why, what the user asked for and prefers, the questions still open and the work not finished, and the tool results that may still be needed (quote their key values exactly).",
  "Leave out greetings, repetition and whatever was later superseded. Write plain text in the third person, as notes; do not address the user and do not continue the conversation.",
].join(" ");

/** The most characters of one tool result or one call's input a summary call is shown. */
const PART_CHARS = 2_000;

/** The summary call's one user message: the earlier summary, then the exchanges as a transcript, clipped to `maxChars`. */
export function summaryRequestText(plan: SummaryPlan, { maxWords, maxChars }: { maxWords: number; maxChars: number }): string {
  const transcript = clipToolResult(plan.messages.map(lineOf).join("\n\n"), { maxChars });
  const earlier = plan.previous === null ? "" : `The summary of what came before (messages ${plan.from_seq} on), to take into the new one:\n<summary>\n${plan.previous}\n</summary>\n\n`;
  return `${earlier}The conversation to condense:\n<conversation>\n${transcript}\n</conversation>\n\nWrite the summary${plan.previous === null ? "" : " of all of it, the earlier summary included"}, in at most ${maxWords} words.`;
}

function lineOf(m: NewMessage): string {
  switch (m.role) {
    case "user":
      return `${m.kind === "notice" ? "Note from loopd" : "User"}: ${m.content.map(userPart).join("\n")}`;
    case "assistant":
      return m.content
        .map((b) => (b.type === "text" ? `Assistant: ${b.text}` : `Assistant called ${b.name} with ${clipToolResult(b.raw_arguments ?? JSON.stringify(b.input), { maxChars: PART_CHARS })}`))
        .join("\n");
    case "tool": {
      const r = m.content[0];
      return `Result of ${r.name}${r.is_error ? " (an error)" : ""}: ${clipToolResult(r.content, { maxChars: PART_CHARS })}`;
    }
  }
}

function userPart(b: UserBlock): string {
  if (b.type === "text") return b.text;
  if (isAttached(b)) return b.type === "image" ? `[an image, ${b.media_type}]` : `[a document${b.title ? ` "${b.title}"` : ""}, ${b.media_type}]`;
  return `[an image at ${b.source.url}]`;
}
