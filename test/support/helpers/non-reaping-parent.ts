import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { createInterface } from "node:readline";

/** A process started under a parent that never waits for it: killed, it stays a zombie (state Z) until that parent ends. */
export interface Unreaped {
  /** The parent (a `sleep`), the test's own child: ending it lets the zombie be reaped. */
  parent: ChildProcess;
  /** The process itself, not the test's child. */
  pid: number;
  /** Settles once the process has exited (a zombie, or gone), with its exit status as the kernel keeps it for the parent that never asks. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `command` as the child of a shell that then becomes `sleep` (exec):
 * `sleep` never calls wait(), so the command, once it exits, is a zombie
 * until `sleep` ends, as under a supervisor or a shell script that does not
 * reap. Its stdin, stdout and stderr are the parent's (`parent.stdin` and so on).
 */
export async function spawnUnreaped(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, "stdio"> = {},
): Promise<Unreaped> {
  // fd 3 tells the command's pid; a background command of a shell gets /dev/null as stdin unless told otherwise (fd 4).
  const script = 'exec 4<&0; "$@" <&4 3>&- 4<&- & echo "$!" >&3; exec 3>&- 4<&- sleep 600';
  const parent = spawn("sh", ["-c", script, "sh", command, ...args], {
    ...options,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  const lines = createInterface({ input: parent.stdio[3] as NodeJS.ReadableStream });
  const said = await lines[Symbol.asyncIterator]().next();
  const pid = Number(said.value);
  if (said.done || !Number.isInteger(pid)) throw new Error(`the non-reaping parent did not tell the pid of ${command}`);
  return { parent, pid, exited: exitOf(pid) };
}

/** The state field of /proc/<pid>/stat ("R", "S", "Z"…), or null once the process is gone. */
export function processState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

async function exitOf(pid: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  for (;;) {
    const fields = statFields(pid);
    if (!fields) return { code: null, signal: null };
    if (fields[0] === "Z" || fields[0] === "X") {
      // Field 52, exit_code: the status waitpid() would give (Linux 3.5+).
      const status = Number(fields[49]);
      const signal = status & 0x7f;
      const name = Object.entries(constants.signals).find(([, n]) => n === signal)?.[0] as NodeJS.Signals | undefined;
      return signal ? { code: null, signal: name ?? null } : { code: status >> 8, signal: null };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}
