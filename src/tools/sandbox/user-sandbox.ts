import type { ToolSandbox } from "./tool-sandbox.js";

/**
 * When loopd runs as root without bubblewrap: the program runs as another
 * user (`TOOL_RUN_AS_USER`), who cannot read root's processes or files, in a
 * PID namespace of its own with its own `/proc` (util-linux `unshare`, which
 * root may use), so `setsid` cannot take anything out of the tree: when
 * `unshare` is killed its child gets SIGKILL (`--kill-child`), and with it
 * every process of the namespace. `setpriv` drops root (its groups too, and
 * no new privileges) before the program starts.
 */
export function createUserSandbox({ uid, gid }: { uid: number; gid: number }): ToolSandbox {
  return {
    kind: "user",
    confine: ({ command, args, cwd }) => ({
      command: "unshare",
      args: ["--pid", "--fork", "--kill-child", "--mount-proc", "setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--no-new-privs", "--", command, ...args],
      cwd,
    }),
  };
}
