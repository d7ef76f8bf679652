import { loadDotEnv } from "./dot-env.js";

/**
 * How each of loopd's programs starts and fails: `.env` read first, then
 * `main`; a failure is one line after the program's prefix ("loopd cannot
 * start:", "replay cannot run:"), what the operator must fix and never a
 * stack trace, and exit status 1. `main`'s number, when it returns one, is
 * the exit status; a server's `main` returns while it serves.
 */
export async function runCli(prefix: string, main: () => Promise<number | void>): Promise<void> {
  try {
    loadDotEnv();
    const code = await main();
    if (typeof code === "number") process.exitCode = code;
  } catch (err) {
    console.error(`${prefix} ${err instanceof Error ? err.message : String(err)}`);
    // Whatever the failed start left open (a pool, a timer) must not keep the process alive.
    process.exit(1);
  }
}
