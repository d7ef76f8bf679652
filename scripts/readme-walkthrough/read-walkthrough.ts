/** A command block of the README and the output block that follows it, if any. */
export interface Step {
  /** The line of the README where the command block starts (1-based). */
  line: number;
  heading: string;
  commands: string;
  expected: { lang: string; text: string } | null;
}

/** Put this comment just before a command block that the walkthrough check must not run (it needs a real API key, another machine, …). */
export const NOT_RUN = "<!-- not run by the walkthrough check";

/**
 * The README's walkthrough as steps: every ```sh block from `from` (a
 * heading) up to `to`, each with the fenced block right after it (its
 * output), unless a `NOT_RUN` comment comes just before it.
 */
export function readWalkthrough(readme: string, { from, to }: { from: string; to: string }): Step[] {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l === from);
  const end = lines.findIndex((l, i) => i > start && l === to);
  if (start === -1 || end === -1) throw new Error(`the README has no section from "${from}" to "${to}"`);
  const blocks: { line: number; lang: string; text: string; skipped: boolean; heading: string; follows: number }[] = [];
  let heading = from;
  let lastEnd = -2;
  for (let i = start; i < end; i++) {
    const line = lines[i]!;
    if (/^#{2,4} /.test(line)) heading = line.replace(/^#+ /, "");
    const fence = /^```(\S*)/.exec(line);
    if (!fence) continue;
    const close = lines.findIndex((l, j) => j > i && l === "```");
    if (close === -1 || close > end) throw new Error(`README line ${i + 1}: a code block that does not end`);
    const before = lines.slice(lastEnd + 1, i).filter((l) => l.trim() !== "");
    blocks.push({
      line: i + 1,
      lang: fence[1] ?? "",
      text: lines.slice(i + 1, close).join("\n"),
      skipped: before.at(-1)?.startsWith(NOT_RUN) ?? false,
      heading,
      // Nothing but blank lines between the previous block and this one: this one is its output.
      follows: before.length === 0 ? blocks.length - 1 : -1,
    });
    lastEnd = close;
    i = close;
  }
  const steps: Step[] = [];
  blocks.forEach((block, index) => {
    if (block.lang !== "sh" || block.skipped) return;
    const next = blocks[index + 1];
    const output = next && next.follows === index && next.lang !== "sh" ? { lang: next.lang, text: next.text } : null;
    steps.push({ line: block.line, heading: block.heading, commands: block.text, expected: output });
  });
  return steps;
}
