import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** A small deterministic PRNG (mulberry32): the same seed, the same conversation. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Source files as a coding agent reads them: a frozen copy of some of
 * loopd's own (test/support/fixtures/token-corpus), so the conversations built from
 * them stay the same as the code base changes.
 */
const SOURCES = (() => {
  const dir = path.join(ROOT, "test/support/fixtures/token-corpus");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".ts.txt"))
    .sort()
    .map((name) => ({
      name: name.replace(/\.txt$/, "").replaceAll("_", "/"),
      text: readFileSync(path.join(dir, name), "utf8"),
    }));
})();

/**
 * What tools return in a coding agent's run, 1–8 KB each: slices of real
 * source files (read_file), JSON records (an API's answer), file listings
 * and search hits — the mix the token estimate and the context bench are
 * measured on.
 */
export function toolResults(
  count: number,
  { seed = 1, minChars = 1024, maxChars = 8192 } = {},
): { name: string; input: Record<string, unknown>; content: string }[] {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const results: { name: string; input: Record<string, unknown>; content: string }[] = [];
  for (let i = 0; i < count; i++) {
    const size = Math.floor(minChars + random() * (maxChars - minChars));
    const kind = i % 4;
    let content: string;
    let name = "read_file";
    let input: Record<string, unknown>;
    if (kind === 0 || kind === 1) {
      const file = pick(SOURCES);
      let text = file.text;
      while (text.length < size) text += `\n${pick(SOURCES).text}`;
      const start = Math.floor(random() * Math.max(1, text.length - size));
      content = text.slice(start, start + size);
      input = { path: file.name, offset: start };
    } else if (kind === 2) {
      name = "fetch_records";
      const records: unknown[] = [];
      while (JSON.stringify(records).length < size) {
        records.push({
          id: `rec_${Math.floor(random() * 1e9).toString(36)}`,
          status: pick(["open", "closed", "pending"]),
          amount: Math.round(random() * 1e6) / 100,
          owner: pick(["ana", "bo", "chen", "dmitri"]),
          updated_at: new Date(1.7e12 + Math.floor(random() * 1e10)).toISOString(),
          tags: [pick(["billing", "infra", "ui"]), pick(["p1", "p2", "p3"])],
        });
      }
      content = JSON.stringify(records).slice(0, size);
      input = { query: `status:${pick(["open", "closed"])}`, page: i };
    } else {
      name = "search_files";
      const lines: string[] = [];
      while (lines.join("\n").length < size) {
        const file = pick(SOURCES);
        const all = file.text.split("\n");
        const n = Math.floor(random() * all.length);
        lines.push(`${file.name}:${n + 1}: ${all[n]!.trim()}`);
      }
      content = lines.join("\n").slice(0, size);
      input = { pattern: pick(["export function", "await ", "return ", "const "]) };
    }
    results.push({ name, input, content });
  }
  return results;
}
