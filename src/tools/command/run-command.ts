import { spawn } from "node:child_process";
import { z } from "zod";
import { SECRET_NAME } from "../../util/redact.js";
import type { Tool } from "../define-tool.js";
import { defineTool } from "../define-tool.js";
import { createHeadAndTail } from "./head-and-tail.js";
import { NO_SANDBOX, type ConfinedSpawn, type ToolSandbox } from "../sandbox/tool-sandbox.js";

/** What the command's environment always holds. */
const BASE_ENV = ["PATH", "HOME", "LANG"];
/** Never passed on, whatever RUN_COMMAND_ENV lists. */
const NEVER = (name: string) => SECRET_NAME.test(name) || name === "DATABASE_URL" || name.endsWith("_URL");
/** Time for a command's result to be gathered after its group is killed, past its own deadline (the executor's margin). */
const GATHER_MS = 2_000;
/** How long the pipes are read after the kill at the deadline, before the result is given with what they held. */
const DEADLINE_GATHER_MS = 250;

/**
 * `run_command`: `sh -c` in the workspace, off unless `ENABLE_RUN_COMMAND`.
 * Every call needs a person's yes, whatever the conversation says. The
 * command runs confined by `sandbox` (only the workspace writable; under
 * bwrap or `user`, a PID namespace of its own that dies whole when it is
 * killed, `setsid` or not) and in a process group of its own, killed at its
 * deadline (`timeout_s`, at most `timeoutMs`) or when the run is cancelled;
 * stdin is closed; its environment is `PATH`, `HOME`, `LANG` and the names
 * in `passEnv` (never a key, a token, a password or a URL that may carry
 * one). The result is `{exit_code, stdout, stderr, timed_out}`, each stream
 * capped with its head and tail kept; at the deadline it comes with the
 * output so far, even if something it started still holds its pipes.
 */
export function createRunCommandTool({
  timeoutMs,
  env: childEnv,
  sandbox = NO_SANDBOX,
}: {
  timeoutMs: number;
  env: Record<string, string>;
  sandbox?: ToolSandbox;
}): Tool {
  const tool = defineTool({
    name: "run_command",
    description:
      "Runs a shell command (sh -c) in the workspace folder and returns its exit code, stdout and stderr. Every call waits for a person's approval.",
    input: z.object({
      command: z.string().min(1).max(10_000).describe("The command line, run by sh -c in the workspace folder"),
      timeout_s: z
        .number()
        .positive()
        .max(timeoutMs / 1000)
        .optional()
        .describe(`Seconds it may take, at most ${timeoutMs / 1000}`),
    }),
    needsApproval: true,
    // The command's own deadline ends it with its output; the executor's only catches a command that will not die.
    timeoutMs: timeoutMs + GATHER_MS,
    execute: ({ command, timeout_s }, ctx) =>
      runConfined({
        spawnAs: sandbox.confine({
          command: "sh",
          args: ["-c", command],
          cwd: ctx.workspaceDir,
          writable: ctx.workspaceDir,
        }),
        env: childEnv,
        deadlineMs: Math.min(timeout_s ? timeout_s * 1000 : timeoutMs, timeoutMs),
        maxBytes: Math.floor(ctx.maxResultChars / 2) - 100,
        signal: ctx.signal,
      }),
  });
  return { ...tool, source: "command" };
}

/** The command's environment: `PATH`, `HOME`, `LANG` and the names of `passEnv` that are set in `env`, but never a secret's. */
export function commandEnvOf(env: Record<string, unknown>, passEnv: readonly string[]): Record<string, string> {
  const names = [...BASE_ENV, ...passEnv.filter((n) => !NEVER(n))];
  return Object.fromEntries(names.flatMap((n) => (typeof env[n] === "string" ? [[n, env[n]]] : [])));
}

function runConfined({
  spawnAs,
  env,
  deadlineMs,
  maxBytes,
  signal,
}: {
  spawnAs: ConfinedSpawn;
  env: NodeJS.ProcessEnv;
  deadlineMs: number;
  maxBytes: number;
  signal: AbortSignal;
}) {
  return new Promise<{ exit_code: number | null; stdout: string; stderr: string; timed_out: boolean }>(
    (resolve, reject) => {
      const child = spawn(spawnAs.command, spawnAs.args, {
        cwd: spawnAs.cwd,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const stdout = createHeadAndTail(maxBytes);
      const stderr = createHeadAndTail(maxBytes);
      child.stdout.on("data", (c: Buffer) => stdout.push(c));
      child.stderr.on("data", (c: Buffer) => stderr.push(c));
      let timedOut = false;
      let settled = false;
      let gather: NodeJS.Timeout | undefined;
      const killGroup = () => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // the group is gone already
        }
      };
      const done = (code: number | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(gather);
        signal.removeEventListener("abort", onAbort);
        resolve({ exit_code: code, stdout: stdout.text(), stderr: stderr.text(), timed_out: timedOut });
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
        // What the sandbox killed closes its pipes at once; what escaped it (no sandbox: a setsid'ed child) may hold them for good. The result comes anyway, with what was read.
        gather = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          done(null);
        }, DEADLINE_GATHER_MS);
      }, deadlineMs);
      const onAbort = () => {
        killGroup();
        settled = true;
        clearTimeout(timer);
        clearTimeout(gather);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      child.on("error", (err) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        reject(err);
      });
      // When the shell exits, what it left in the background dies with its group (and its namespace), so the pipes close and every byte is read.
      child.on("exit", killGroup);
      child.on("close", (code) => done(code));
    },
  );
}
