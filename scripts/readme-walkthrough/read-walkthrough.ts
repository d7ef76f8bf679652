/** A command block of a walkthrough page and the output block that follows it, if any. */
export interface Step {
  /** The line of the page where the command block starts (1-based). */
  line: number;
  heading: string;
  commands: string;
  expected: { lang: string; text: string } | null;
}

/** Put this comment just before a command block that the walkthrough check must not run (it needs a real API key, another machine, …). */
export const NOT_RUN = "<!-- not run by the walkthrough check";

/**
 * A walkthrough page as steps: every ```sh block from `from` (a heading;
 * default the page's start) up to `to` (default its end), each with the
 * fenced block right after it (its output), unless a `NOT_RUN` comment comes
 * just before it.
 */
export function readWalkthrough(page: string, { from, to }: { from?: string; to?: string } = {}): Step[] {
  const lines = page.split("\n");
  const start = from === undefined ? 0 : lines.findIndex((l) => l === from);
  const end = to === undefined ? lines.length : lines.findIndex((l, i) => i > start && l === to);
  if (start === -1 || end === -1) throw new Error(`the page has no section from "${from}" to "${to}"`);
  const blocks: { line: number; lang: string; text: string; skipped: boolean; heading: string; follows: number }[] = [];
  let heading = from ?? "";
  let lastEnd = start - 1;
  for (let i = start; i < end; i++) {
    const line = lines[i]!;
    if (/^#{1,4} /.test(line)) heading = line.replace(/^#+ /, "");
    const fence = /^```(\S*)/.exec(line);
    if (!fence) continue;
    const close = lines.findIndex((l, j) => j > i && l === "```");
    if (close === -1 || close > end) throw new Error(`line ${i + 1}: a code block that does not end`);
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

/** The heading of the walkthrough's last section: a numbered list of the pages it goes on through, in order. */
export const REST_OF_WALKTHROUGH = "## The rest of the walkthrough";

/** The pages (paths relative to the walkthrough page) that the walkthrough goes on through, in the order its last section lists them. */
export function restOfWalkthrough(walkthrough: string): string[] {
  const start = walkthrough.indexOf(`\n${REST_OF_WALKTHROUGH}\n`);
  if (start === -1) throw new Error(`the walkthrough has no section "${REST_OF_WALKTHROUGH}"`);
  const section = walkthrough.slice(start + 1).split(/\n(?=## )/)[0]!;
  return [...section.matchAll(/^\d+\. \[[^\]]*\]\(([^)#\s]+\.md)\)/gm)].map((m) => m[1]!);
}
