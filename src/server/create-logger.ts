import pino, { type Logger } from "pino";
import pinoPretty from "pino-pretty";
import { createRedactor } from "../util/redact.js";

/** Secrets never reach the logs, whatever a request or an error carries. */
export const REDACT = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  "req.headers.cookie",
  "headers.authorization",
  'headers["x-api-key"]',
  "headers.cookie",
  "*.apiKey",
  "*.api_key",
];

export interface LoggerOptions {
  /** Coloured, readable lines for a person at a terminal; JSON lines for anything that collects logs. @default whether stdout is a terminal */
  pretty?: boolean;
  /** @default stdout */
  destination?: NodeJS.WritableStream;
  /** Values that never reach the logs, wherever they appear in a line (config `secrets`). @default none */
  secrets?: readonly string[];
}

export function createLogger(
  level: string,
  { pretty = process.stdout.isTTY === true, destination, secrets = [] }: LoggerOptions = {},
): Logger {
  const redactor = createRedactor(secrets);
  // Paths catch the known places of credentials; the line's text catches them anywhere else (an SDK's error message).
  const options = { level, redact: { paths: REDACT, censor: "[redacted]" }, hooks: { streamWrite: redactor.text } };
  if (pretty)
    return pino(
      options,
      pinoPretty({ ...(destination && { destination }), translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" }),
    );
  return destination ? pino(options, destination) : pino(options);
}
