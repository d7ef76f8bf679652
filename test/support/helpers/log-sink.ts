import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import { REDACT } from "../../../src/app.js";

/** A pino logger whose JSON lines a test can read back. */
export function captureLogs(level = "debug"): { logger: Logger; lines: any[] } {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level, redact: { paths: REDACT, censor: "[redacted]" } }, sink), lines };
}
