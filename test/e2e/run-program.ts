import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { builtTestProgram, TEST_PROGRAMS } from "../support/helpers/test-programs.js";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Where programs run unless a test says otherwise: an empty folder, so that
 * nothing of a developer's checkout (a `.env`, `./data`, `./workspace`)
 * reaches a test's process.
 */
export const emptyFolder = mkdtempSync(path.join(tmpdir(), "loopd-cwd-"));

/** The `--import` that runs TypeScript sources, by path: it works from any working folder. */
export const TSX = fileURLToPath(import.meta.resolve("tsx"));

/**
 * The arguments to node that run `entry` (relative to the repository): a
 * program of src/, or one of the tests' own programs, as the run's build of
 * it in dist/ (test/support/helpers/build-server.ts); anything else (an
 * example, or any entry when there is no build) through tsx.
 */
export function programArgs(entry: string): string[] {
  const source = path.join(repoRoot, entry);
  const built = entry.startsWith("src/")
    ? path.join(repoRoot, "dist", path.relative(path.join(repoRoot, "src"), source)).replace(/\.ts$/, ".js")
    : TEST_PROGRAMS.includes(entry)
      ? builtTestProgram(repoRoot, entry)
      : null;
  return built && existsSync(built) ? [built] : ["--import", TSX, source];
}

export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Both, as they came. */
  output: string;
}

/**
 * Runs one of loopd's programs (`src/main.ts`, `src/cli/replay.ts`, …) with
 * exactly `env` (plus PATH and HOME) until it exits, or `timeoutMs` passes
 * and it is killed.
 */
export function runProgram(
  entry: string,
  {
    args = [],
    env = {},
    cwd = emptyFolder,
    timeoutMs = 60_000,
  }: { args?: string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<ProgramRun> {
  const child = spawn(process.execPath, [...programArgs(entry), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run: ProgramRun = { code: null, stdout: "", stderr: "", output: "" };
  child.stdout.on("data", (c: Buffer) => ((run.stdout += c), (run.output += c)));
  child.stderr.on("data", (c: Buffer) => ((run.stderr += c), (run.output += c)));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ ...run, code });
    }),
  );
}
