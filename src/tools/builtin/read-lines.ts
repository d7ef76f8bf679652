import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";

export interface FileLine {
  /** The line without its line break, cut to its first `maxLineChars` characters. */
  text: string;
  /** The whole line's length in characters, however much of it `text` holds. */
  length: number;
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Yields a file's lines in order, reading the open file a chunk at a time
 * from its start, so that a caller who stops early reads no further and
 * memory stays at a chunk plus `maxLineChars`, however long the file or its
 * lines. Lines end at "\n", and a "\r" right before it is dropped, as
 * `split(/\r?\n/)` would; the newline that ends the last line does not start
 * another. Reads at most `maxBytes` bytes, a file that grows meanwhile
 * included, and stops with the signal's reason once it aborts. Given the
 * file's `size` (fstat's), a read that returns fewer bytes than asked and
 * reaches it is the end, so a small file costs one read (without it, or
 * short before it, as some file systems' reads are, it reads on until a read
 * returns nothing); `first`, the chunk at the start the caller already read
 * (`readChunk`), costs none.
 */
export async function* readLines({
  handle,
  first,
  size,
  maxBytes,
  maxLineChars,
  signal,
}: {
  handle: FileHandle;
  first?: FileChunk | undefined;
  size?: number | undefined;
  maxBytes: number;
  maxLineChars: number;
  signal: AbortSignal;
}): AsyncGenerator<FileLine> {
  const decoder = new StringDecoder("utf8");
  let chunk: Buffer | undefined;
  let pending = first;
  let position = 0;
  let head = "";
  let length = 0;
  let endsWithCr = false;
  const add = (text: string, from: number, to: number) => {
    if (to <= from) return;
    if (head.length < maxLineChars) head += text.slice(from, Math.min(to, from + maxLineChars - head.length));
    length += to - from;
    endsWithCr = text.charCodeAt(to - 1) === 13;
  };
  const take = (): FileLine => {
    const line = { text: head, length };
    head = "";
    length = 0;
    endsWithCr = false;
    return line;
  };

  for (;;) {
    signal.throwIfAborted();
    const { bytes, ended } =
      pending ??
      (await readChunk(handle, { position, maxBytes, size, into: (chunk ??= Buffer.allocUnsafe(CHUNK_BYTES)) }));
    pending = undefined;
    position += bytes.length;
    const text = decoder.write(bytes) + (ended ? decoder.end() : "");
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      add(text, start, end);
      if (endsWithCr) {
        length--;
        head = head.slice(0, length);
      }
      yield take();
      start = end + 1;
    }
    add(text, start, text.length);
    if (ended) {
      if (length > 0) yield take();
      return;
    }
  }
}

/** A chunk of a file read at a position: its bytes, and whether the file (or the bytes allowed) ended in it. */
export interface FileChunk {
  bytes: Buffer;
  ended: boolean;
}

/**
 * Reads the chunk at `position` into `into` (a new buffer by default), at
 * most up to `maxBytes` of the file. It ended the file when it read nothing,
 * or read short at `size` or past it (see `readLines`).
 */
export async function readChunk(
  handle: FileHandle,
  {
    position,
    maxBytes,
    size,
    into = Buffer.allocUnsafe(CHUNK_BYTES),
  }: { position: number; maxBytes: number; size?: number | undefined; into?: Buffer },
): Promise<FileChunk> {
  const wanted = Math.min(into.length, maxBytes - position);
  const { bytesRead } = await handle.read(into, 0, wanted, position);
  const short = bytesRead < wanted && size !== undefined && position + bytesRead >= size;
  return { bytes: into.subarray(0, bytesRead), ended: bytesRead === 0 || short };
}
