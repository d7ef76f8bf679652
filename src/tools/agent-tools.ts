import { z } from "zod";
import type { PendingToolCall } from "../core/run-outcome.js";
import type { RunUsage } from "../core/usage.js";
import { defineTool, type Tool } from "./define-tool.js";

/** An agent a conversation may call is offered as `agent__<name>` (names are 1–48 of `[a-z0-9_-]`, so it is a valid tool name). */
const PREFIX = "agent__";

export const agentToolName = (agent: string) => `${PREFIX}${agent}`;

/** The agent a tool's name calls, when it is a call of an agent the conversation lists; else null. */
export function calledAgentOf(name: string, agents: readonly string[]): string | null {
  if (!name.startsWith(PREFIX)) return null;
  const agent = name.slice(PREFIX.length);
  return agents.includes(agent) ? agent : null;
}

/** What a call of an agent came to, as the calling run takes it. */
export type AgentCallEnd =
  /** The child run ended (or was never started: too deep, an agent gone): the result the model reads, and what the child spent (null: nothing). */
  | { type: "ended"; content: string; isError: boolean; usage: RunUsage | null }
  /** The child run waits for the application: the calling run waits too, on the same calls. */
  | { type: "waiting"; pending: PendingToolCall[] };

/** Where a call of an agent is made, and what it asks. */
export interface AgentCallRequest {
  tenant: string;
  conversationId: string;
  /** The calling run's depth: 1 for a run of its own, its conversation's `parent.depth` for a child's. */
  depth: number;
  runId: string;
  toolCallId: string;
  agent: string;
  message: string;
  signal: AbortSignal;
}

/**
 * Runs agents for other agents' calls (the composition root makes it: a
 * call starts a run in a child conversation, which lives above tools/).
 */
export interface AgentCaller {
  /** The descriptions of the tenant's agents named (an unknown one is left out; an archived one stays, so a call it started finds its child). */
  describe(tenant: string, agents: readonly string[]): Promise<Map<string, string | null>>;
  /** Starts the call's child run (or finds the one it already started) and waits for its end or its pause. Never throws for what the child does. */
  call(request: AgentCallRequest): Promise<AgentCallEnd>;
}

/** A tool's answer that is not a result yet: the run waits on these calls (a child run's), and the call runs again once they are answered. */
export class ToolCallWaits {
  constructor(readonly pending: PendingToolCall[]) {}
}

/** A tool's result that cost tokens of its own (a child run's): they count in the calling run's usage and budget. */
export class ToolResultWithUsage {
  constructor(
    readonly text: string,
    readonly isError: boolean,
    readonly usage: RunUsage | null,
  ) {}
}

const input = z.object({ message: z.string().min(1).describe("What to ask the agent, as a user would write it") });

/**
 * The tools a conversation's `agents` offer: one per agent still there,
 * described as the agent is. A call waits for the child run as long as the
 * calling run's time budget lets it (the child has its own budget too).
 */
export function agentTools({
  caller,
  tenant,
  depth,
  described,
}: {
  caller: AgentCaller;
  tenant: string;
  /** The depth of the runs that get them (see `AgentCallRequest.depth`). */
  depth: number;
  /** The conversation's agents, in its order, with their descriptions. */
  described: ReadonlyMap<string, string | null>;
}): Tool[] {
  return [...described].map(([agent, description]) =>
    defineTool({
      name: agentToolName(agent),
      description: description ?? `Asks the agent ${agent}; its answer comes back as the result.`,
      input,
      // The calling run's clock and signal bound the wait; a day is only the executor's outer bound.
      timeoutMs: 86_400_000,
      execute: async ({ message }, ctx) => {
        if (ctx.conversationId === null || ctx.runId === null)
          throw new Error("an agent can be called only from a conversation's run");
        const end = await caller.call({
          tenant,
          conversationId: ctx.conversationId,
          depth,
          runId: ctx.runId,
          toolCallId: ctx.toolCallId,
          agent,
          message,
          signal: ctx.signal,
        });
        return end.type === "waiting"
          ? new ToolCallWaits(end.pending)
          : new ToolResultWithUsage(end.content, end.isError, end.usage);
      },
    }),
  );
}

/** The tools of a conversation's `agents` for one of its runs, in its order (none without a caller). */
export async function agentToolsOf(
  caller: AgentCaller | undefined,
  conversation: { tenantId: string; agents: readonly string[]; parent: { depth: number } | null },
): Promise<Tool[]> {
  if (!caller || conversation.agents.length === 0) return [];
  const found = await caller.describe(conversation.tenantId, conversation.agents);
  const described = new Map(
    conversation.agents.flatMap((name) => (found.has(name) ? [[name, found.get(name)!] as const] : [])),
  );
  return agentTools({ caller, tenant: conversation.tenantId, depth: conversation.parent?.depth ?? 1, described });
}
