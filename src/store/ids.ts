import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * An opaque id with a readable prefix (`conv_…`, `msg_…`, `run_…`): a
 * millisecond timestamp then 80 random bits, so ids sort roughly by creation
 * and never collide in practice.
 */
export function newId(prefix: "conv" | "msg" | "run" | "act" | "key" | "att" | "agt" | "resp" | "cmp"): string {
  const time = Date.now().toString(36).padStart(9, "0");
  if (used + 16 > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  let rand = "";
  for (let i = 0; i < 16; i++) rand += ALPHABET[pool[used++]! % 36];
  return `${prefix}_${time}${rand}`;
}

/** Random bytes drawn 4 KB at a time (one call to the system's generator per 256 ids, not one per id); each byte used once. */
let pool = Buffer.alloc(0);
let used = 0;
