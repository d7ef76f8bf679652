import { kindOfPlace, type RunAs } from "./reachable-by.js";
import type { ToolSandbox } from "./tool-sandbox.js";

/**
 * Covers loopd's own files before the program starts: run by root inside
 * the new mount namespace, its arguments `d:<folder>` (an empty tmpfs over
 * it) and `f:<file>` (/dev/null over it) up to `--`, then what to run. A
 * mount that fails stops it (exit 126): the program never runs with a
 * secret in view.
 */
const COVER =
  'while [ "$1" != "--" ]; do case "$1" in d:*) mount -t tmpfs -o size=1m,mode=755 none "${1#d:}" || exit 126;; f:*) mount --bind /dev/null "${1#f:}" || exit 126;; esac; shift; done; shift; exec "$@"';

/**
 * When loopd runs as root without bubblewrap: the program runs as another
 * user (`TOOL_RUN_AS_USER`), who cannot read root's processes or files, in a
 * PID namespace of its own with its own `/proc` (util-linux `unshare`, which
 * root may use), so `setsid` cannot take anything out of the tree: when
 * `unshare` is killed its child gets SIGKILL (`--kill-child`), and with it
 * every process of the namespace. In the mount namespace `--mount-proc`
 * makes (private), loopd's own files that the user could read (`hidden`:
 * its data, its `.env`, secret files, the database's socket) are covered
 * first; then `setpriv` drops root (its groups too, and no new privileges).
 */
export function createUserSandbox({ uid, gid, hidden = [] }: RunAs & { hidden?: readonly string[] }): ToolSandbox {
  return {
    kind: "user",
    runAs: { uid, gid },
    confine: ({ command, args, cwd }) => {
      // Not /tmp: the workspace may be there, and this sandbox has no way to bring it back over a fresh one (bwrap's does).
      const covers = hidden.flatMap((place) => {
        const kind = kindOfPlace(place);
        return kind === "dir" ? [`d:${place}`] : kind === "file" ? [`f:${place}`] : [];
      });
      return {
        command: "unshare",
        args: [
          "--pid",
          "--fork",
          "--kill-child",
          "--mount-proc",
          "sh",
          "-c",
          COVER,
          "sh",
          ...covers,
          "--",
          "setpriv",
          `--reuid=${uid}`,
          `--regid=${gid}`,
          "--clear-groups",
          "--no-new-privs",
          "--",
          command,
          ...args,
        ],
        cwd,
      };
    },
  };
}
