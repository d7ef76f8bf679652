import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readChunk, readLines, type FileLine } from "../../../src/tools/builtin/read-lines.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "loopd-read-lines-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CHUNK = 64 * 1024;

async function linesOf(
  content: string | Buffer,
  { maxLineChars = Infinity, maxBytes = Infinity, signal = new AbortController().signal } = {},
): Promise<FileLine[]> {
  const file = path.join(dir, "file.txt");
  await writeFile(file, content);
  const handle = await open(file, "r");
  try {
    const lines: FileLine[] = [];
    for await (const line of readLines({ handle, maxBytes, maxLineChars, signal })) lines.push(line);
    return lines;
  } finally {
    await handle.close();
  }
}

/** What reading the whole file and splitting it gives: the behaviour readLines keeps. */
function split(content: string): FileLine[] {
  if (content === "") return [];
  const lines = content.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines.map((text) => ({ text, length: text.length }));
}

describe("readLines", () => {
  it.each([
    ["an empty file", ""],
    ["one line without a newline", "one"],
    ["lines ending in CRLF and LF, blank ones among them", "a\r\n\r\nb\n\nc\r\n"],
    ["a lone CR inside and at the end", "a\rb\nc\r"],
    ["a CRLF split across two chunks", `${"a".repeat(CHUNK - 1)}\r\nb`],
    ["a newline right at a chunk's end", `${"a".repeat(CHUNK - 1)}\n${"b".repeat(CHUNK)}\n`],
    ["a two-byte character split across two chunks", `${"a".repeat(CHUNK - 1)}é\nz`],
    ["a four-byte character split across two chunks", `${"a".repeat(CHUNK - 2)}😀\nz`],
    ["a line longer than several chunks", `${"x".repeat(3 * CHUNK + 5)}\r\nend\n`],
  ])("splits %s as split(/\\r?\\n/) would", async (_name, content) => {
    expect(await linesOf(content)).toEqual(split(content));
  });

  it("keeps only the head of a long line and its whole length", async () => {
    const lines = await linesOf(`${"x".repeat(2 * CHUNK)}\r\nshort\r\n`, { maxLineChars: 10 });
    expect(lines).toEqual([
      { text: "x".repeat(10), length: 2 * CHUNK },
      { text: "short", length: 5 },
    ]);
  });

  it("reads no more than maxBytes", async () => {
    expect(await linesOf("one\ntwo\nthree\n", { maxBytes: 6 })).toEqual([
      { text: "one", length: 3 },
      { text: "tw", length: 2 },
    ]);
  });

  it("stops with the signal's reason", async () => {
    await expect(linesOf("one\n", { signal: AbortSignal.abort(new Error("stop")) })).rejects.toThrow("stop");
  });
});

describe("reads of readLines", () => {
  /** The file's lines read with `first` (or not), and how many reads readLines made itself. */
  async function counted(content: string, { withFirst }: { withFirst: boolean }) {
    const file = path.join(dir, "counted.txt");
    await writeFile(file, content);
    const handle = await open(file, "r");
    try {
      let reads = 0;
      const counting = new Proxy(handle, {
        get: (target, key) =>
          key === "read"
            ? (...args: Parameters<typeof handle.read>) => (reads++, target.read(...args))
            : Reflect.get(target, key, target),
      });
      const { size } = await handle.stat();
      const first = withFirst ? await readChunk(handle, { position: 0, maxBytes: Infinity, size }) : undefined;
      const lines: FileLine[] = [];
      for await (const line of readLines({
        handle: counting,
        first,
        size,
        maxBytes: Infinity,
        maxLineChars: Infinity,
        signal: new AbortController().signal,
      }))
        lines.push(line);
      return { lines, reads };
    } finally {
      await handle.close();
    }
  }

  it("reads a file smaller than a chunk once: a short read at its size is its end", async () => {
    const content = "one\ntwo\nthree\n";
    expect(await counted(content, { withFirst: false })).toEqual({ lines: split(content), reads: 1 });
  });

  it("reads on after a read that comes back short before the file's size, as some file systems' do (found by review)", async () => {
    const file = path.join(dir, "short-reads.txt");
    const content = Array.from({ length: 300 }, (_, i) => `line ${i}`).join("\n");
    await writeFile(file, content);
    const handle = await open(file, "r");
    try {
      // At most 100 bytes a read, whatever is asked.
      const shortReads = new Proxy(handle, {
        get: (target, key) =>
          key === "read"
            ? (buffer: Buffer, offset: number, length: number, position: number) =>
                target.read(buffer, offset, Math.min(length, 100), position)
            : Reflect.get(target, key, target),
      });
      const { size } = await handle.stat();
      const lines: FileLine[] = [];
      for await (const line of readLines({
        handle: shortReads,
        size,
        maxBytes: Infinity,
        maxLineChars: Infinity,
        signal: new AbortController().signal,
      }))
        lines.push(line);
      expect(lines).toEqual(split(content));
    } finally {
      await handle.close();
    }
  });

  it("takes the first chunk the caller read as the file's start, and reads on after it only when it was full", async () => {
    const small = "a\r\nb\n";
    expect(await counted(small, { withFirst: true })).toEqual({ lines: split(small), reads: 0 });
    // Two chunks and a half, a line across each boundary: what follows the first chunk is read from where it ended.
    const large = Array.from({ length: 4000 }, (_, i) => `line ${i} ${"é".repeat(i % 13)}`).join("\n");
    const { lines, reads } = await counted(large, { withFirst: true });
    expect(lines).toEqual(split(large));
    expect(reads).toBe(Math.ceil(Buffer.byteLength(large) / CHUNK) - 1);
  });
});
