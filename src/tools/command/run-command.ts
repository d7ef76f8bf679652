import { spawn } from "node:child_process";
import { z } from "zod";
import { SECRET_NAME } from "../../redact.js";
import type { Tool } from "../define-tool.js";
import { defineTool } from "../define-tool.js";
import { createHeadAndTail } from "./head-and-tail.js";

/** What the command's environment always holds. */
const BASE_ENV = ["PATH", "HOME", "LANG"];
/** Never passed on, whatever RUN_COMMAND_ENV lists. */
const NEVER = (name: string) => SECRET_NAME.test(name) || name === "DATABASE_URL" || name.endsWith("_URL");
/** Time for a command's result to be gathered after its group is killed, past its own deadline. */
const GATHER_MS = 2_000;

/**
 * `run_command`: `sh -c` in the workspace, off unless `ENABLE_RUN_COMMAND`.
 * Every call needs a person's yes, whatever the conversation says. The
 * command runs in a process group of its own, killed whole at its deadline
 * (`timeout_s`, at most `timeoutMs`) or when the run is cancelled; stdin is
 * closed; its environment is `PATH`, `HOME`, `LANG` and the names in
 * `passEnv` (never a key, a token, a password or a URL that may carry one).
 * The result is `{exit_code, stdout, stderr, timed_out}`, each stream
 * capped with its head and tail kept.
 */
export function createRunCommandTool({ timeoutMs, env: childEnv }: { timeoutMs: number; env: Record<string, string> }): Tool {
  const tool = defineTool({
    name: "run_command",
    description: "Runs a shell command (sh -c) in the workspace folder and returns its exit code, stdout and stderr. Every call waits for a person's approval.",
    input: z.object({
      command: z.string().min(1).max(10_000).describe("The command line, run by sh -c in the workspace folder"),
      timeout_s: z.number().positive().max(timeoutMs / 1000).optional().describe(`Seconds it may take, at most ${timeoutMs / 1000}`),
    }),
    needsApproval: true,
    // The command's own deadline ends it with its output; the executor's only catches a command that will not die.
    timeoutMs: timeoutMs + GATHER_MS,
    execute: ({ command, timeout_s }, ctx) => runInGroup({ command, cwd: ctx.workspaceDir, env: childEnv, deadlineMs: Math.min(timeout_s ? timeout_s * 1000 : timeoutMs, timeoutMs), maxBytes: Math.floor(ctx.maxResultChars / 2) - 100, signal: ctx.signal }),
  });
  return { ...tool, source: "command" };
}

/** The command's environment: `PATH`, `HOME`, `LANG` and the names of `passEnv` that are set in `env`, but never a secret's. */
export function commandEnvOf(env: Record<string, unknown>, passEnv: readonly string[]): Record<string, string> {
  const names = [...BASE_ENV, ...passEnv.filter((n) => !NEVER(n))];
  return Object.fromEntries(names.flatMap((n) => (typeof env[n] === "string" ? [[n, env[n]]] : [])));
}

function runInGroup({ command, cwd, env, deadlineMs, maxBytes, signal }: { command: string; cwd: string; env: NodeJS.ProcessEnv; deadlineMs: number; maxBytes: number; signal: AbortSignal }) {
  return new Promise<{ exit_code: number | null; stdout: string; stderr: string; timed_out: boolean }>((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = createHeadAndTail(maxBytes);
    const stderr = createHeadAndTail(maxBytes);
    child.stdout.on("data", (c: Buffer) => stdout.push(c));
    child.stderr.on("data", (c: Buffer) => stderr.push(c));
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, deadlineMs);
    const onAbort = () => {
      killGroup();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      reject(err);
    });
    // When the shell exits, what it left in the background dies with its group, so the pipes close and every byte is read.
    child.on("exit", killGroup);
    child.on("close", (code) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({ exit_code: code, stdout: stdout.text(), stderr: stderr.text(), timed_out: timedOut });
    });
  });
}
