import { statSync } from "node:fs";
import type { ToolSandbox } from "./tool-sandbox.js";

/** nobody: the sandbox's user and group inside (outside it stays loopd's, the only one an unprivileged user namespace maps). */
const NOBODY = "65534";

export interface BwrapOptions {
  /** Folders and files of loopd's that must not be readable (its data, its `.env`, secret files). */
  hidden: readonly string[];
  /** loopd's home: replaced by an empty folder (it may hold credentials: `.pgpass`, `.npmrc`, cloud keys). */
  home: string | undefined;
  /** @default "bwrap" */
  bwrap?: string;
}

/**
 * bubblewrap: the program gets its own user, PID, IPC and UTS namespaces
 * (cgroup too where the kernel allows), so it sees only its own processes,
 * with a `/proc` of its own (never loopd's environ or memory), and runs as
 * nobody inside. The host's files are there read-only (programs, libraries,
 * node and its modules: `npx` and `node server.mjs` work), with an empty
 * writable `/tmp` and home, and loopd's own files (`hidden`) covered; only
 * its folder is writable. `--die-with-parent` and the PID namespace make
 * killing bwrap end the whole tree; `--new-session` keeps it off loopd's
 * terminal. The network stays loopd's: tools call APIs, and a network
 * namespace would cut them off (loopd listens on loopback: see the README).
 * `env -u PWD`: bwrap sets PWD; the program gets exactly the environment
 * it is given, as it does unconfined.
 */
export function createBwrapSandbox({ hidden, home, bwrap = "bwrap" }: BwrapOptions): ToolSandbox {
  return {
    kind: "bwrap",
    confine({ command, args, cwd, writable }) {
      const mounts = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"];
      if (home && home !== "/" && kindOf(home) === "dir") mounts.push("--tmpfs", home);
      // Its folder and its working folder come back even if under the home; loopd's secrets are covered after, even if under them.
      if (writable) mounts.push("--bind", writable, writable);
      if (cwd !== writable && kindOf(cwd) === "dir") mounts.push("--ro-bind", cwd, cwd);
      for (const place of hidden) {
        const kind = kindOf(place);
        if (kind === "dir") mounts.push("--tmpfs", place);
        else if (kind === "file") mounts.push("--ro-bind", "/dev/null", place);
      }
      return {
        command: bwrap,
        args: [...NAMESPACES, "--uid", NOBODY, "--gid", NOBODY, "--die-with-parent", "--new-session", ...mounts, "--chdir", cwd, "--", "env", "-u", "PWD", command, ...args],
        cwd,
      };
    },
  };
}

const NAMESPACES = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];

function kindOf(place: string): "dir" | "file" | null {
  try {
    const stat = statSync(place);
    return stat.isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}
