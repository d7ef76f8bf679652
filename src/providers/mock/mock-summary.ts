import { textOf, type NewMessage } from "../../core/messages.js";

/** The questions a mock summary lists at most. */
const MAX_QUESTIONS = 20;

/**
 * What the mock answers a summary call (context `summarize`): the user's
 * questions it was shown, the earlier summary's included, listed — a
 * stand-in that shows what a summary keeps, the same for the same input.
 */
export function mockSummary(messages: readonly NewMessage[]): string {
  const text = messages.map(textOf).join("\n");
  const earlier = /<summary>\n[\s\S]*?The user asked, in order: (.*)\n/.exec(text)?.[1]?.split(" | ") ?? [];
  const asked = [...text.matchAll(/^User: (.+)$/gm)].map((m) => m[1]!.trim().slice(0, 80));
  const questions = [...earlier, ...asked].slice(-MAX_QUESTIONS);
  return `Summary (mock): ${questions.length} earlier question${questions.length === 1 ? "" : "s"}.\nThe user asked, in order: ${questions.join(" | ")}\n`;
}
