import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { programArgs, repoRoot } from "../../e2e/run-program.js";

const started = new Set<ChildProcessWithoutNullStreams>();

/**
 * test/store/hold-data-dir.ts in a process of its own: another process that
 * takes an embedded database's folder (`hold`: at once; `race`: on `go()`).
 * `said()` resolves with its next line: "ready", then "held" or the refusal.
 */
export function startHolder(mode: "hold" | "race", dir: string) {
  const child = spawn(process.execPath, [...programArgs("test/store/hold-data-dir.ts"), mode, dir], { cwd: repoRoot });
  started.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => started.delete(child));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const said = async () => {
    const next = await lines.next();
    if (next.done) throw new Error(`the holder ended without a word: ${child.exitCode}`);
    return next.value;
  };
  return {
    child,
    said,
    exited,
    go: () => child.stdin.write("go\n"),
    kill: () => (child.kill("SIGKILL"), exited),
    end: () => (child.stdin.end(), exited),
  };
}

/** Every holder still running: for afterAll, whatever happened. */
export const killAllHolders = () => {
  for (const child of started) child.kill("SIGKILL");
};
