import { writeFileSync } from "node:fs";
import path from "node:path";
import type { FakeTurn, RecordedRequest } from "../../test/support/fake-llm/server.js";

/** The file every step reads: 16 lines of 64 bytes, so each tool result is about 1 KB. */
export const LONG_RUN_FILE = "one-kb.txt";
export const LONG_RUN_PROMPT = `Read ${LONG_RUN_FILE}, again and again.`;

export function writeLongRunFile(workspaceDir: string): void {
  const line = (i: number) =>
    `line ${String(i + 1).padStart(2, "0")}: ${"the quick brown fox jumps over the lazy dog ".repeat(2)}`.slice(0, 63);
  writeFileSync(path.join(workspaceDir, LONG_RUN_FILE), Array.from({ length: 16 }, (_, i) => `${line(i)}\n`).join(""));
}

/**
 * The fake model of a long run: it asks for the file until the conversation
 * since the user's message holds `steps` tool results, then answers in text.
 * So a run makes `steps` tool steps and one more model call, whoever drives it.
 */
export function toolStepsThenAnswer(steps: number): (req: RecordedRequest) => FakeTurn {
  return (req) => {
    const messages = req.body.messages as Array<{ role: string }>;
    let toolResults = 0;
    for (let i = messages.length - 1; i >= 0 && messages[i]!.role !== "user"; i--) {
      if (messages[i]!.role === "tool") toolResults++;
    }
    return toolResults < steps
      ? { toolCalls: [{ name: "read_file", input: { path: LONG_RUN_FILE } }] }
      : { text: "Done." };
  };
}
