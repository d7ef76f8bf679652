/** How `run_command` and stdio MCP servers are kept from reading loopd (`TOOL_SANDBOX`). */
export type SandboxKind = "bwrap" | "user" | "none";

/** A program to start, as the tool source means it. */
export interface ToolProgram {
  command: string;
  args: readonly string[];
  /** Its working folder. */
  cwd: string;
  /** The only folder it may write, besides a /tmp of its own; null: none. */
  writable: string | null;
}

/** What to hand `spawn` so that the program runs confined. */
export interface ConfinedSpawn {
  command: string;
  args: string[];
  cwd: string;
}

export interface ToolSandbox {
  readonly kind: SandboxKind;
  /** The user the program runs as, when not loopd's own (loopd being root: commands never run as root). */
  readonly runAs?: { uid: number; gid: number } | null;
  /**
   * Where the operator's stdio MCP servers run, when not here: bwrap as
   * loopd's own user (the programs the operator chose, with their files
   * where the operator put them, which TOOL_RUN_AS_USER may not reach), still
   * without loopd's environment, `/proc`, secrets or a writable `/proc/sys`.
   * @default this sandbox
   */
  readonly forServers?: ToolSandbox;
  /**
   * The spawn that runs `program` confined. Killing the spawned process ends
   * everything the program started, `setsid` or not (for `bwrap` and `user`:
   * its pid namespace dies with it).
   */
  confine(program: ToolProgram): ConfinedSpawn;
}

/** No confinement (`TOOL_SANDBOX=none`): the program runs as loopd, and sees what loopd's user may see. */
export const NO_SANDBOX: ToolSandbox = {
  kind: "none",
  confine: ({ command, args, cwd }) => ({ command, args: [...args], cwd }),
};
