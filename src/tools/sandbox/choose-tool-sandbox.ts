import { execFileSync } from "node:child_process";
import { chownSync, statSync } from "node:fs";
import type { Config } from "../../config.js";
import { OperatorError } from "../../errors.js";
import { toolSources } from "../sources.js";
import { entriesOf } from "../tools-file.js";
import { createBwrapSandbox } from "./bwrap-sandbox.js";
import type { SandboxSettings } from "./sandbox-config.js";
import { NO_SANDBOX, type ToolSandbox } from "./tool-sandbox.js";
import { createUserSandbox } from "./user-sandbox.js";

/** The most a probe may take: a trivial program in a fresh sandbox starts in milliseconds. */
const PROBE_MS = 10_000;

export interface ChooseSandboxOptions {
  settings: SandboxSettings;
  /** Whether `run_command` is on: then no confinement at all refuses the start, unless `TOOL_SANDBOX=none` says so. */
  runCommand: boolean;
  /** What else runs in it, as the warning names it (`stdio MCP servers`); none: nothing to warn about. */
  programs: readonly string[];
  warn: (message: string) => void;
  /** Seams: whether this sandbox runs a trivial program here, and whether loopd is root. @default really try it; `process.getuid() === 0` */
  works?: (sandbox: ToolSandbox) => boolean;
  isRoot?: boolean;
  /** @default `id -u`/`id -g` of the user */
  idsOf?: (user: string) => { uid: number; gid: number } | null;
}

/**
 * The sandbox of `run_command` and the programs `TOOLS_FILE`'s sources start (stdio MCP servers), probed once at start
 * (user namespaces may be off in this kernel or container). An explicit
 * `TOOL_SANDBOX` that cannot work here stops the start; unset, bwrap is
 * used when it works, else `user` when loopd is root. With neither, a
 * start with `run_command` on is refused (a command could read every
 * tenant's data through loopd's environment); the sources' programs alone only
 * get a warning: they are programs the operator chose and ran unconfined
 * until now, and refusing would stop a working deployment where the kernel
 * allows no sandbox.
 */
export function chooseToolSandbox({
  settings,
  runCommand,
  programs,
  warn,
  works = probe,
  isRoot = process.getuid?.() === 0,
  idsOf = idsOfUser,
}: ChooseSandboxOptions): ToolSandbox {
  const { mode, runAsUser, hidden, home } = settings;
  if (mode === "none") return NO_SANDBOX;
  // As root, tools never run as root: bwrap too is started as TOOL_RUN_AS_USER (root outside its user namespace could write the host's /proc/sys, read root's files, reach sockets as root).
  const runAs = isRoot ? idsOf(runAsUser) : null;
  const bwrap = isRoot && !runAs ? null : createBwrapSandbox({ hidden, home, runAs });
  const user = () => (runAs ? createUserSandbox({ ...runAs, hidden }) : null);
  if (mode === "bwrap") {
    if (bwrap && works(bwrap)) return bwrap;
    throw new OperatorError(
      "TOOL_SANDBOX=bwrap, but bubblewrap cannot run here (is `bwrap` installed, and are user namespaces allowed?); install it, or set TOOL_SANDBOX=user (loopd as root) or TOOL_SANDBOX=none",
    );
  }
  if (mode === "user") {
    if (!isRoot)
      throw new OperatorError(
        "TOOL_SANDBOX=user needs loopd to run as root (to start tools as TOOL_RUN_AS_USER); use TOOL_SANDBOX=bwrap or none",
      );
    const sandbox = user();
    if (sandbox && works(sandbox)) return sandbox;
    throw new OperatorError(
      `TOOL_SANDBOX=user, but tools cannot be started as TOOL_RUN_AS_USER=${runAsUser} here (is it a user of this system, and are util-linux's unshare and setpriv installed?)`,
    );
  }
  if (bwrap && works(bwrap)) return bwrap;
  const fallback = user();
  if (fallback && works(fallback)) return fallback;
  if (runCommand) {
    throw new OperatorError(
      "ENABLE_RUN_COMMAND=true, but commands cannot be confined here: bubblewrap (bwrap) is missing or cannot create user namespaces, and loopd is not root (for TOOL_RUN_AS_USER); install bubblewrap, or set TOOL_SANDBOX=none to run commands as loopd's own user (they can then read loopd's secrets)",
    );
  }
  if (programs.length > 0)
    warn(
      `${programs.join(" and ")} run unconfined, as loopd's own user: bubblewrap (bwrap) is missing or cannot create user namespaces here, and loopd is not root; install bubblewrap, or set TOOL_SANDBOX=none to silence this`,
    );
  return NO_SANDBOX;
}

function probe(sandbox: ToolSandbox): boolean {
  const { command, args, cwd } = sandbox.confine({ command: "true", args: [], cwd: "/", writable: null });
  try {
    execFileSync(command, args, {
      cwd,
      stdio: "ignore",
      timeout: PROBE_MS,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    return true;
  } catch {
    return false;
  }
}

function idsOfUser(user: string): { uid: number; gid: number } | null {
  try {
    const id = (flag: string) =>
      Number(execFileSync("id", [flag, user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    return null;
  }
}

/** `chooseToolSandbox` for this configuration; no probe when nothing would run in it, unless `TOOL_SANDBOX` names one (the operator hears at once that it cannot work). */
export function toolSandboxOf(
  config: Pick<Config, "tools">,
  { warn = () => {} }: { warn?: (message: string) => void } = {},
): ToolSandbox {
  const runCommand = config.tools.runCommand !== null;
  const programs = toolSources.flatMap((source) => source.programsOf(entriesOf(config.tools.file, source)) ?? []);
  if (!runCommand && programs.length === 0 && config.tools.sandbox.mode === null) return NO_SANDBOX;
  const sandbox = chooseToolSandbox({ settings: config.tools.sandbox, runCommand, programs, warn });
  if (runCommand && sandbox.runAs) handWorkspaceTo(config.tools.workspaceDir, sandbox.runAs, { warn });
  return sandbox;
}

/**
 * Loopd being root, commands run as TOOL_RUN_AS_USER, and the workspace is
 * the one folder they may write: a workspace that user does not own is
 * handed to it (loopd, root, still reads and writes it), and the start says so.
 */
function handWorkspaceTo(
  dir: string,
  { uid, gid }: { uid: number; gid: number },
  { warn }: { warn: (message: string) => void },
): void {
  let owner: number;
  try {
    owner = statSync(dir).uid;
  } catch {
    return; // made later, by the caller that makes it (serve makes it first)
  }
  if (owner === uid) return;
  chownSync(dir, uid, gid);
  warn(
    `WORKSPACE_DIR ${dir} now belongs to TOOL_RUN_AS_USER (uid ${uid}): loopd runs as root, and run_command's commands run as that user, never as root`,
  );
}
