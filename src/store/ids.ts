import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * An opaque id with a readable prefix (`conv_…`, `msg_…`, `run_…`): a
 * millisecond timestamp then 80 random bits, so ids sort roughly by creation
 * and never collide in practice.
 */
export function newId(prefix: "conv" | "msg" | "run" | "act" | "key" | "att"): string {
  const time = Date.now().toString(36).padStart(9, "0");
  const bytes = randomBytes(16);
  let rand = "";
  for (let i = 0; i < 16; i++) rand += ALPHABET[bytes[i]! % 36];
  return `${prefix}_${time}${rand}`;
}
