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
 * included, and stops with the signal's reason once it aborts.
 */
export async function* readLines({
  handle,
  maxBytes,
  maxLineChars,
  signal,
}: {
  handle: FileHandle;
  maxBytes: number;
  maxLineChars: number;
  signal: AbortSignal;
}): AsyncGenerator<FileLine> {
  const decoder = new StringDecoder("utf8");
  const chunk = Buffer.alloc(CHUNK_BYTES);
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
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, maxBytes - position), position);
    position += bytesRead;
    const text = bytesRead === 0 ? decoder.end() : decoder.write(chunk.subarray(0, bytesRead));
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
    if (bytesRead === 0) {
      if (length > 0) yield take();
      return;
    }
  }
}
