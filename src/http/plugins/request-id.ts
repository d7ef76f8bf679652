import { randomUUID } from "node:crypto";

/** `x-request-id` as the client sent it, when it is at most 128 of `[A-Za-z0-9._:-]`; else a new one. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === "string" && /^[A-Za-z0-9._:-]{1,128}$/.test(header) ? header : randomUUID();
}
