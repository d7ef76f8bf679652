import { isAttached, type NewMessage, type UserBlock } from "../core/messages.js";
import { clipToolResult } from "../tools/clip-tool-result.js";
import type { SummaryPlan } from "./plan-summary.js";

export { SUMMARY_SYSTEM } from "../core/summary-system.js";

/** The most characters of one part (a tool result, a call's input, an answer) a summary call is shown: the first that lets the whole fit. */
const PART_CHARS = [2_000, 1_000, 400, 150];

/**
 * The summary call's one user message: the earlier summary, then the
 * exchanges as a transcript of at most `maxChars`: each long part is
 * clipped (head and tail kept) as much as it takes, the whole only as a
 * last resort, so no exchange drops out of the middle.
 */
export function summaryRequestText(
  plan: SummaryPlan,
  { maxWords, maxChars }: { maxWords: number; maxChars: number },
): string {
  let transcript = "";
  for (const partChars of PART_CHARS) {
    transcript = plan.messages.map((m) => lineOf(m, partChars)).join("\n\n");
    if (transcript.length <= maxChars) break;
  }
  transcript = clipToolResult(transcript, { maxChars });
  const earlier =
    plan.previous === null
      ? ""
      : `The summary of what came before (messages ${plan.from_seq} on), to take into the new one:\n<summary>\n${plan.previous}\n</summary>\n\n`;
  return `${earlier}The conversation to condense:\n<conversation>\n${transcript}\n</conversation>\n\nWrite the summary${plan.previous === null ? "" : " of all of it, the earlier summary included"}, in at most ${maxWords} words.`;
}

function lineOf(m: NewMessage, partChars: number): string {
  const clip = (text: string) => clipToolResult(text, { maxChars: partChars });
  switch (m.role) {
    case "user":
      return `${m.kind === "notice" ? "Note from loopd" : "User"}: ${clip(m.content.map(userPart).join("\n"))}`;
    case "assistant":
      return m.content
        .map((b) =>
          b.type === "text"
            ? `Assistant: ${clip(b.text)}`
            : `Assistant called ${b.name} with ${clip(b.raw_arguments ?? JSON.stringify(b.input))}`,
        )
        .join("\n");
    case "tool": {
      const r = m.content[0];
      return `Result of ${r.name}${r.is_error ? " (an error)" : ""}: ${clip(r.content)}`;
    }
  }
}

function userPart(b: UserBlock): string {
  if (b.type === "text") return b.text;
  if (isAttached(b))
    return b.type === "image"
      ? `[an image, ${b.media_type}]`
      : `[a document${b.title ? ` "${b.title}"` : ""}, ${b.media_type}]`;
  return `[an image at ${b.source.url}]`;
}
