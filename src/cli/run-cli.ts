import { loadDotEnv, type DotEnv } from "./dot-env.js";

/**
 * How each of loopd's programs starts and fails: `.env` read first, then
 * `main`; a failure is one line after the program's prefix ("loopd cannot
 * start:", "replay cannot run:"), what the operator must fix and never a
 * stack trace, and exit status 1. `main`'s number, when it returns one, is
 * the exit status; a server's `main` returns while it serves.
 */
export async function runCli(prefix: string, main: () => Promise<number | void>): Promise<void> {
  let dotEnv: DotEnv | null = null;
  try {
    dotEnv = loadDotEnv();
    const code = await main();
    if (typeof code === "number") process.exitCode = code;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // A value that came from .env is fixed there: say so.
    const fromFile = dotEnv?.names.find((name) => new RegExp(`\\b${name}\\b`).test(message));
    console.error(`${prefix} ${message}${fromFile ? ` (${fromFile} is set in ${dotEnv!.file})` : ""}`);
    // Whatever the failed start left open (a pool, a timer) must not keep the process alive.
    process.exit(1);
  }
}

/** Text a server, a database or a file gave, as it may go to a terminal: no control characters. */
// eslint-disable-next-line no-control-regex
export const printable = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
