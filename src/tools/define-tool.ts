import { z } from "zod";
import type { ImageBlock } from "../core/messages.js";

/** What a tool gets besides its input. */
export interface ToolContext {
  /** Aborted when the call times out or the run is cancelled; long work should stop. */
  signal: AbortSignal;
  /** The only folder file tools may touch (config `WORKSPACE_DIR`). */
  workspaceDir: string;
  /** The longest result the model will see whole; longer ones are clipped. A tool that can page stops before it. */
  maxResultChars: number;
  /** The call's id, and where it was made (the conversation, and the run: null outside one). */
  toolCallId: string;
  conversationId: string | null;
  runId: string | null;
  /** Keeps images of the result as attachments of the conversation; absent outside a conversation's run (describe them instead). */
  keepImages?: ImageKeeper | undefined;
}

/** Where a call is made: its conversation and run, and what keeps the images its result holds. */
export type CallPlace = Pick<ToolContext, "conversationId" | "runId" | "keepImages">;

/** An image a tool returned: its media type as the tool says, and its bytes as base64. */
export interface ToolImage {
  mediaType: string;
  data: string;
}

/**
 * Keeps a result's images as attachments of the conversation, checked as a
 * user's images are: for each, in order, the block referring to it, or why it
 * was not kept (its bytes, its type, one past `MAX_ATTACHMENTS_PER_MESSAGE`).
 */
export type ImageKeeper = (images: readonly ToolImage[]) => Promise<(ImageBlock | { refused: string })[]>;

/** A tool's result that holds images (kept with `ToolContext.keepImages`) besides its text. */
export class ToolResultWithImages {
  constructor(
    readonly text: string,
    readonly images: readonly ImageBlock[],
  ) {}
}

/**
 * Thrown by a tool whose result is an error the model should read as it is
 * (a receiver's own error output, an argument a schema refused), without
 * the exception's name in front.
 */
export class ToolErrorResult extends Error {
  override readonly name = "ToolErrorResult";
}

/** Whether a tool's calls need a person's yes: never, always, or depending on the input. */
export type ApprovalMode = "never" | "always" | "conditional";

/** Where a tool comes from (`GET /tools`); a tool that says nothing is a built-in (every name: `TOOL_ORIGINS` in sources.ts). */
export const sourceOf = (tool: Pick<Tool, "source">): string => tool.source ?? "builtin";

/** `run_command`'s source: never offered by default, and offered only to `RUN_COMMAND_TENANTS` where that is set. */
export const isCommandTool = (tool: Pick<Tool, "source">): boolean => tool.source === "command";

/** What a tool's `needsApproval` gets besides the call's input. */
export interface ToolApprovalContext {
  toolCallId: string;
}

/**
 * Whether a call needs a person's yes before it runs: always, never, or
 * decided from its input (a transfer above a limit).
 */
export type ApprovalRule<I> = boolean | ((input: I, ctx: ToolApprovalContext) => boolean);

/**
 * A tool as the executor and the registry see it. `I` is the input after zod
 * has parsed it (defaults applied).
 */
// `any` by default so a `Tool[]` can hold tools with different inputs; the
// executor only ever passes a value that `input` itself produced.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Tool<I = any> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  /** JSON Schema of the input as the model may send it: an object schema, no `$schema`. */
  inputSchema: Record<string, unknown>;
  /**
   * Returns the result for the model: a string is sent as is, anything else as
   * JSON. Throwing is fine: the error becomes a result the model can act on.
   */
  execute(input: I, ctx: ToolContext): unknown | Promise<unknown>;
  /** Overrides the executor's default timeout. */
  timeoutMs?: number;
  /** Overrides the executor's default result cap (config `TOOL_RESULT_MAX_CHARS`). */
  maxResultChars?: number;
  /**
   * Running it changes nothing: read-only calls may run in parallel with each
   * other, and their step's answer is saved with their results (after a
   * crash before that write, they run again).
   */
  readOnly: boolean;
  /** Whether a call (its input already parsed) waits for approval; the conversation's `approval_required` adds to it. */
  needsApproval(input: I, ctx: ToolApprovalContext): boolean;
  /** What `needsApproval` is, as `GET /tools` shows it. */
  approval: ApprovalMode;
  /** `command` (run_command), or the key of the `TOOLS_FILE` source that made it. @default "builtin" */
  source?: string;
  /** The server it belongs to (an MCP server's tool). */
  server?: string;
  /** Whether it can be called now (an MCP server's tool, while its server restarts, cannot). @default always */
  available?: () => boolean;
}

/** Both Anthropic and OpenAI accept only these tool names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function defineTool<S extends z.ZodType>(def: {
  name: string;
  description: string;
  input: S;
  execute: (input: z.infer<S>, ctx: ToolContext) => unknown | Promise<unknown>;
  timeoutMs?: number;
  /** The longest result the model sees whole (head and tail kept past it). @default config `TOOL_RESULT_MAX_CHARS` */
  maxResultChars?: number;
  /** @default false */
  readOnly?: boolean;
  /** @default false */
  needsApproval?: ApprovalRule<z.infer<S>>;
}): Tool<z.infer<S>> {
  if (!TOOL_NAME.test(def.name)) {
    throw new TypeError(`tool name ${JSON.stringify(def.name)} must match ${TOOL_NAME.source}`);
  }
  if (def.timeoutMs !== undefined && !(def.timeoutMs > 0)) {
    throw new TypeError(`tool ${def.name}: timeoutMs must be a positive number`);
  }
  const tool: Tool<z.infer<S>> = {
    name: def.name,
    description: def.description,
    // S is a ZodType whose output is z.infer<S>; TypeScript cannot see that through the generic.
    input: def.input as unknown as z.ZodType<z.infer<S>>,
    inputSchema: toInputSchema(def.name, def.input),
    execute: def.execute,
    readOnly: def.readOnly ?? false,
    needsApproval: approvalRuleOf(def.needsApproval ?? false),
    approval: typeof def.needsApproval === "function" ? "conditional" : def.needsApproval ? "always" : "never",
  };
  if (def.timeoutMs !== undefined) tool.timeoutMs = def.timeoutMs;
  if (def.maxResultChars !== undefined) {
    if (!Number.isInteger(def.maxResultChars) || def.maxResultChars < 256)
      throw new TypeError(`tool ${def.name}: maxResultChars must be an integer of at least 256`);
    tool.maxResultChars = def.maxResultChars;
  }
  return tool;
}

function approvalRuleOf<I>(rule: ApprovalRule<I>): (input: I, ctx: ToolApprovalContext) => boolean {
  return typeof rule === "function" ? rule : () => rule;
}

/**
 * The schema of what the model sends (`io: "input"`), so fields with a zod
 * default are optional for the model. Providers require an object schema at
 * the top: a union of objects gets `type: "object"` added beside its `oneOf`;
 * anything else is a programming error and throws when the tool is defined.
 */
function toInputSchema(name: string, input: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>;
  if (schema.type === undefined && (schema.oneOf ?? schema.anyOf) !== undefined) {
    return { type: "object", ...schema };
  }
  if (schema.type !== "object") {
    throw new TypeError(
      `tool ${name}: input must be an object schema (z.object(...)), got ${JSON.stringify(schema.type)}`,
    );
  }
  return schema;
}
