import { existsSync } from "node:fs";
import path from "node:path";
import { OperatorError } from "./errors.js";

/**
 * Reads `.env` from the working folder into `process.env`, when there is
 * one, for `npm start` and every command (replay, db:migrate): variables
 * already set in the environment win over the file. Returns the file read,
 * or null.
 */
export function loadDotEnv({ cwd = process.cwd() }: { cwd?: string } = {}): string | null {
  const file = path.join(cwd, ".env");
  if (!existsSync(file)) return null;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new OperatorError(`${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  return file;
}
