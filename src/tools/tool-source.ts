import type { Logger } from "pino";
import type { z } from "zod";
import type { ToolSandbox } from "./sandbox/tool-sandbox.js";
import type { ToolSet } from "./tool-set.js";

/** What a source's tool set is made with: the tools' settings and loopd's means, never the whole configuration. */
export interface ToolSourceDeps {
  /** The timeout of a tool without one of its own (`TOOL_TIMEOUT_MS`). */
  defaultTimeoutMs: number;
  /** The biggest result cap configured (`TOOL_RESULT_MAX_CHARS` and its caps by tool): a result is clipped to its tool's after. */
  biggestResultChars: number;
  /** Where the programs it starts run (see `chooseToolSandbox`). */
  sandbox: ToolSandbox;
  /** Values of loopd's environment. */
  env: Record<string, unknown>;
  log: Logger;
  /** Takes the configuration's secrets out of a text. */
  redact: (text: string) => string;
  /** A server of it is being started again after it dropped or failed. */
  onRestart: (server: string) => void;
}

/**
 * The name an entry of `TOOLS_FILE` takes, unique across every source: one
 * tool's, or a family's (a server's), whose tools are named `<family>__<tool>`.
 */
export type NameClaim = { tool: string } | { family: string };

/** The family a tool's name says it belongs to (`fs` of `fs__read_file`), if it has one. */
export const familyOf = (name: string): string | null => {
  const at = name.indexOf("__");
  return at > 0 ? name.slice(0, at) : null;
};

/**
 * A source of tools configured in `TOOLS_FILE` (its HTTP endpoints, its MCP
 * servers), as one value: its section of the file, what of it is secret,
 * and how its tools are made. The sources are listed once, in sources.ts.
 */
export interface ToolSource<Entry = unknown, Key extends string = string> {
  /** Its section of `TOOLS_FILE`, and the `source` of its tools (`GET /tools`). */
  readonly key: Key;
  /** One entry of its section (the section is a list of them, empty when absent). */
  readonly fileSchema: z.ZodType<Entry>;
  /** What of an entry never appears in a log or a trace (header values, secrets), with what `${VAR}` put into it. */
  secretsOf(entry: Entry): string[];
  /** The name an entry takes (its `name`). */
  claimOf(entry: Entry): NameClaim;
  /** What of its entries runs in the tool sandbox, as a warning names it when nothing can confine it (`stdio MCP servers`); null: nothing. */
  programsOf(entries: readonly Entry[]): string | null;
  /** Its tools (loaded only when asked for: loading the configuration does not load a source's client). */
  create(entries: readonly Entry[], deps: ToolSourceDeps): Promise<ToolSet>;
}
