import type { ToolCallBlock } from "../core/messages.js";
import type { ToolSpec } from "../core/model-provider.js";
import type { ToolAction } from "../core/run-outcome.js";
import { executeToolCalls, type ToolCallOutcome } from "./execute-tool-calls.js";
import type { CallPlace, Tool } from "./define-tool.js";
import { coveredBy } from "./mcp/mcp-tool-name.js";
import type { ToolRegistry } from "./tool-registry.js";

/** What a proposed call needs before anything else happens: the application's decision, or the loop's own (a `finish` call). */
export type CallDecision = ToolAction | "loop";

/**
 * One run's tools: the allow-list applied once, here. It says what the model
 * is offered, what each call the model proposes needs (run it, ask a person,
 * wait for the client's output, or leave it to the loop), and runs the calls
 * that may run. Every call of every step goes through `decide`, whatever
 * else its step holds: this is the seam where the application decides.
 */
export interface ToolBox {
  /** What the model is offered, in a stable order (the prompt cache keeps hitting): the conversation's tools, its client tools, the loop's own. */
  readonly specs: ToolSpec[];
  decide(call: ToolCallBlock): CallDecision;
  /** Whether running a call `decide` said to run changes nothing: the tool it was decided for says it only reads, or it runs nothing. */
  readOnly(call: ToolCallBlock): boolean;
  /** Runs calls `decide` said to run; one outcome per call, in order, each as soon as it is done (see `executeToolCalls`). */
  run(
    calls: ToolCallBlock[],
    options: { signal?: AbortSignal | undefined; onStart?: ((call: ToolCallBlock) => void) | undefined },
  ): AsyncIterable<ToolCallOutcome>;
}

export interface ToolBoxOptions {
  registry: ToolRegistry;
  /** The names the conversation may use; any other registered tool is, for this run, an unknown tool. */
  allowedTools: readonly string[];
  /** Tools the client executes: offered, never run here; their calls wait for the client's output. @default none */
  clientTools?: readonly ToolSpec[];
  /** Tools the conversation wants a person's yes for, whatever their own rule says. @default none */
  approvalRequired?: readonly string[];
  /** The loop's own tools (`finish`): offered last, their calls left to the loop. @default none */
  loopTools?: readonly ToolSpec[];
  workspaceDir: string;
  /** Where the calls are made (the conversation, the run). @default nowhere */
  place?: CallPlace;
  /** For tools without a timeout of their own. */
  defaultTimeoutMs?: number;
  /** How many read-only calls of one step run at once. */
  concurrency?: number;
  /** For tools without a result cap of their own. */
  maxResultChars?: number;
  now?: () => number;
}

export function createToolBox({
  registry,
  allowedTools,
  clientTools = [],
  approvalRequired = [],
  loopTools = [],
  workspaceDir,
  place,
  defaultTimeoutMs,
  concurrency,
  maxResultChars,
  now,
}: ToolBoxOptions): ToolBox {
  const allowed = registry.resolve(allowedTools).filter((name) => registry.has(name));
  const allowedSet = new Set(allowed);
  const client = new Set(clientTools.map((t) => t.name));
  const loop = new Set(loopTools.map((t) => t.name));
  // `fs__*` asks for every tool of the server fs, present and future.
  const needsPerson = (name: string) => coveredBy(approvalRequired, name);
  // The tool each call was decided for runs it, even if its name meant another by then (an MCP server listed its tools again).
  const decided = new Map<string, Tool | null>();

  return {
    specs: [...registry.specs(allowed), ...clientTools.map((t) => ({ ...t, client: true as const })), ...loopTools],

    /**
     * A client tool's output must be submitted; a call to a tool the
     * conversation lists in `approvalRequired`, or whose own rule says so
     * for this input, must be approved. A call the executor would refuse
     * anyway (unknown tool, arguments that are not JSON or do not parse) is
     * not worth a person's time: it runs, and the model reads the error. A
     * rule that throws asks.
     */
    decide(call) {
      if (loop.has(call.name)) return "loop";
      if (call.raw_arguments !== undefined) return "run";
      if (client.has(call.name)) return "submit_output";
      const tool = allowedSet.has(call.name) ? registry.get(call.name) : undefined;
      // A call to a tool not found now stays one (answered as unknown): found by the time it runs, it would run undecided.
      decided.set(call.id, tool ?? null);
      if (!tool) return "run";
      const parsed = tool.input.safeParse(call.input);
      if (!parsed.success) return "run";
      if (needsPerson(call.name)) return "approve";
      try {
        return tool.needsApproval(parsed.data, { toolCallId: call.id }) ? "approve" : "run";
      } catch {
        // A rule that fails cannot say the call is harmless: a person decides.
        return "approve";
      }
    },

    // Arguments that are not JSON and unknown tools are answered without running anything.
    readOnly: (call) =>
      call.raw_arguments !== undefined || decided.get(call.id) === null || !!decided.get(call.id)?.readOnly,

    run: (calls, { signal, onStart }) =>
      executeToolCalls({
        calls,
        registry,
        allowed,
        decided,
        workspaceDir,
        place,
        ...(defaultTimeoutMs !== undefined && { defaultTimeoutMs }),
        ...(concurrency !== undefined && { concurrency }),
        ...(maxResultChars !== undefined && { maxResultChars }),
        ...(signal && { signal }),
        ...(onStart && { onStart }),
        ...(now && { now }),
      }),
  };
}
