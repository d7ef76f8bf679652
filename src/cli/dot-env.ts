import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { OperatorError } from "../errors.js";

/** What `.env` set: the file, and the variables it gave (those the environment did not set already). */
export interface DotEnv {
  file: string;
  names: string[];
}

/**
 * Reads `.env` from the working folder into `process.env`, when there is
 * one, for `npm start` and every command (replay, db:migrate): variables
 * already set in the environment win over the file. A line that is none of
 * `NAME=value`, a comment or blank is an error naming it (Node's own reader
 * would skip it without a word).
 */
export function loadDotEnv({
  cwd = process.cwd(),
  env = process.env,
}: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): DotEnv | null {
  const file = path.join(cwd, ".env");
  if (!existsSync(file)) return null;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new OperatorError(`${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  checkLines(file, text);
  const names: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    names.push(name);
  }
  return { file, names };
}

const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=(.*)$/;

function checkLines(file: string, text: string): void {
  let open: string | null = null;
  text.split(/\r?\n/).forEach((line, i) => {
    if (open) {
      if (line.includes(open)) open = null;
      return;
    }
    if (line.trim() === "" || line.trimStart().startsWith("#")) return;
    const assigned = ASSIGNMENT.exec(line);
    if (!assigned)
      throw new OperatorError(
        `${file} line ${i + 1} is not NAME=value (a comment starts with #): ${JSON.stringify(line.slice(0, 80))}`,
      );
    // A quoted value may go on over several lines, until its quote closes.
    const value = assigned[1]!.trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === "`") && !value.slice(1).includes(quote)) open = quote;
  });
}
