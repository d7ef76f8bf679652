import { kindOfPlace, reachableBy, type RunAs } from "./reachable-by.js";
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
  /**
   * Loopd being root: the user bwrap itself is started as (`setpriv`), so
   * the program is that user to the kernel too. Inside its user namespace
   * it is nobody either way, but outside it would stay root: writing the
   * host's `/proc/sys`, reading root's files, connecting to sockets as root.
   * @default null (loopd's own user, who is not root)
   */
  runAs?: RunAs | null;
}

/** The most a sandbox's `/tmp` and home may hold: they are memory (tmpfs). */
const TMPFS_BYTES = String(64 * 1024 * 1024);

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
export function createBwrapSandbox({ hidden, home, bwrap = "bwrap", runAs = null }: BwrapOptions): ToolSandbox {
  return {
    kind: "bwrap",
    runAs,
    ...(runAs && { forServers: createBwrapSandbox({ hidden, home, bwrap }) }),
    confine({ command, args, cwd, writable }) {
      // The host's kernel settings stay read-only, whoever the program is outside (loopd's servers run as loopd, root or not).
      const mounts = [
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
        "--dev",
        "/dev",
        "--size",
        TMPFS_BYTES,
        "--tmpfs",
        "/tmp",
      ];
      if (home && home !== "/" && kindOfPlace(home) === "dir" && (!runAs || reachableBy(home, runAs)))
        mounts.push("--size", TMPFS_BYTES, "--tmpfs", home);
      // Its folder and its working folder come back even if under the home; loopd's secrets are covered after, even if under them.
      if (writable) mounts.push("--bind", writable, writable);
      if (cwd !== writable && kindOfPlace(cwd) === "dir") mounts.push("--ro-bind", cwd, cwd);
      for (const place of hidden) {
        // What the tools' user cannot reach is hidden already (and bwrap, as that user, could not cover it).
        if (runAs && !reachableBy(place, runAs)) continue;
        const kind = kindOfPlace(place);
        if (kind === "dir") mounts.push("--tmpfs", place);
        else if (kind === "file") mounts.push("--ro-bind", "/dev/null", place);
      }
      const sandboxed = [
        ...NAMESPACES,
        "--uid",
        NOBODY,
        "--gid",
        NOBODY,
        "--die-with-parent",
        "--new-session",
        ...mounts,
        "--chdir",
        cwd,
        "--",
        "env",
        "-u",
        "PWD",
        command,
        ...args,
      ];
      if (!runAs) return { command: bwrap, args: sandboxed, cwd };
      return {
        command: "setpriv",
        args: [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, "--clear-groups", "--", bwrap, ...sandboxed],
        cwd,
      };
    },
  };
}

const NAMESPACES = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
