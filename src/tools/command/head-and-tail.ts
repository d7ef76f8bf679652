/**
 * Keeps the first and the last bytes of a stream, at most `maxBytes` in all,
 * and counts what it left out between them: a command's output cannot fill
 * the memory, and the model still sees how it began and how it ended.
 */
export function createHeadAndTail(maxBytes: number) {
  const headMax = Math.ceil(maxBytes / 2);
  const tailMax = maxBytes - headMax;
  let head = Buffer.alloc(0);
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let total = 0;
  return {
    push(chunk: Buffer): void {
      total += chunk.length;
      if (head.length < headMax) {
        const room = headMax - head.length;
        head = Buffer.concat([head, chunk.subarray(0, room)]);
        chunk = chunk.subarray(room);
      }
      if (chunk.length === 0) return;
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tailBytes - tail[0]!.length >= tailMax) tailBytes -= tail.shift()!.length;
    },
    /** The text kept; past `maxBytes`, the cut says how many bytes it left out. */
    text(): string {
      const kept = Buffer.concat(tail);
      const last = kept.subarray(Math.max(0, kept.length - tailMax));
      const cut = total - head.length - last.length;
      if (cut <= 0) return Buffer.concat([head, last]).toString("utf8");
      return `${head.toString("utf8")}\n[… ${cut} bytes left out …]\n${last.toString("utf8")}`;
    },
  };
}
