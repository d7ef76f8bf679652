import { describe, expect, test } from "vitest";
import { runAgentLoop } from "../../src/agent/run-agent-loop.js";
import { SUMMARY_SYSTEM } from "../../src/core/summary-system.js";
import type { AgentEvent } from "../../src/core/agent-events.js";
import type { NewMessage } from "../../src/core/messages.js";
import type { ModelProvider, ModelRequest } from "../../src/core/model-provider.js";
import type { RunBudget } from "../../src/core/run-settings.js";
import type { Usage } from "../../src/core/usage.js";
import { createToolBox } from "../../src/tools/tool-box.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";

/*
 * Context `summarize` and the run's budgets, against a scripted model (the
 * loop sees a model only through `ModelProvider`): a summary call is weighed
 * before it is made, and what it spent is weighed before the next call.
 */

/** 12 exchanges of ~400 characters each: far over a 1,000-token limit. */
const HISTORY: NewMessage[] = Array.from({ length: 12 }, (_, i): NewMessage[] => [
  {
    role: "user",
    content: [{ type: "text", text: `Question ${i}: ${"what about the deployment checklist? ".repeat(6)}` }],
  },
  {
    role: "assistant",
    content: [{ type: "text", text: `Answer ${i}: ${"check the health probes and the rollback plan. ".repeat(6)}` }],
  },
]).flat();

function scriptedModel({ summaryInput }: { summaryInput: number }) {
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name: "mock",
    defaultModel: "m",
    buildRequest: (r) => r,
    formatHistory: (_s, messages) => ({ messages: [...messages] }),
    async generate(request) {
      requests.push(request);
      const summary = request.system === SUMMARY_SYSTEM;
      const usage: Usage = {
        input_tokens: summary ? summaryInput : 300,
        output_tokens: 40,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      };
      return {
        content: [
          { type: "text", text: summary ? "Twelve questions about a deployment checklist, answered." : "Done." },
        ],
        stopReason: "end_turn",
        rawStopReason: "end_turn",
        usage,
        model: "m",
      };
    },
  };
  return { provider, requests };
}

const SONNET_LIKE = (u: Usage) => (u.input_tokens * 3 + u.output_tokens * 15) / 1e6;

const run = (
  provider: ModelProvider,
  budget: Partial<RunBudget>,
  {
    summaryModel,
    costOf = SONNET_LIKE,
  }: { summaryModel?: string; costOf?: (u: Usage, model?: string) => number | null } = {},
) => {
  const events: AgentEvent[] = [];
  const outcome = runAgentLoop({
    provider,
    history: [...HISTORY, { role: "user", content: [{ type: "text", text: "And now?" }] }],
    save: async () => {},
    toolBox: createToolBox({
      registry: createToolRegistry([]),
      allowedTools: [],
      approvalRequired: [],
      loopTools: [],
      workspaceDir: "/nowhere",
    }),
    call: {
      model: "m",
      system: null,
      toolChoice: "auto",
      context: {
        strategy: "summarize",
        keep_tool_results: 4,
        max_input_tokens: 1000,
        ...(summaryModel && { summary_model: summaryModel }),
      },
      cacheKey: null,
      maxTokens: 1024,
    },
    budget: { max_steps: 5, max_tokens: null, max_seconds: null, max_cost_usd: null, grace_turn: false, ...budget },
    finish: null,
    costOf,
    limits: { modelCallTimeoutMs: 60_000, modelStreamIdleMs: 60_000, graceWindowMs: 30_000 },
    onEvent: (e) => events.push(e),
  });
  return { outcome, events };
};

describe("summarize under a budget", () => {
  test("the summary's tokens count: a run whose summary leaves too little for its call stops before it, over its token budget", async () => {
    const { provider, requests } = scriptedModel({ summaryInput: 3000 });
    const { outcome } = run(provider, { max_tokens: 3600 });
    const ended = await outcome;
    expect(requests.map((r) => r.system === SUMMARY_SYSTEM)).toEqual([true]);
    expect(ended).toMatchObject({ status: "incomplete", stopReason: "budget", budgetExceeded: "tokens", steps: 0 });
    expect(ended.usage).toMatchObject({ input_tokens: 3000, output_tokens: 40 });
  });

  test("with room for both, the summary and the call are made, and the run's usage and cost are both calls'", async () => {
    const { provider, requests } = scriptedModel({ summaryInput: 3000 });
    const { outcome, events } = run(provider, { max_tokens: 20_000 });
    const ended = await outcome;
    expect(requests.map((r) => r.system === SUMMARY_SYSTEM)).toEqual([true, false]);
    expect(ended).toMatchObject({
      status: "completed",
      steps: 1,
      usage: { input_tokens: 3300, output_tokens: 80, cost_usd: (3300 * 3 + 80 * 15) / 1e6 },
    });
    const summary = events.find((e) => e.type === "context.summary");
    expect(summary).toMatchObject({ summarizes: { from_seq: 1 }, error: null, summary_seq: 26 });
    // The call after it is sent the summary first, in place of what it covers.
    const text = JSON.stringify(requests[1]!.messages[0]);
    expect(text).toContain("[Summary of messages 1–");
    expect(text).toContain("Twelve questions about a deployment checklist");
  });

  test("a summary call the budget has no room for is not made: the last call (the grace call) is sent the exchanges left out instead", async () => {
    const { provider, requests } = scriptedModel({ summaryInput: 3000 });
    const { outcome, events } = run(provider, { max_tokens: 2000, grace_turn: true });
    const ended = await outcome;
    expect(requests.map((r) => r.system === SUMMARY_SYSTEM)).toEqual([false]);
    expect(events.some((e) => e.type === "context.summary")).toBe(false);
    expect(requests[0]!.toolChoice).toBe("none");
    expect(ended).toMatchObject({ status: "incomplete", stopReason: "budget", steps: 1 });
    expect(JSON.stringify(requests[0]!.messages[0])).toMatch(
      /earlier messages of this conversation left out to fit the context window/,
    );
  });

  test("a summary model dearer than the run's is weighed at its own price: a summary the cost budget cannot pay for is not made", async () => {
    const { provider, requests } = scriptedModel({ summaryInput: 3000 });
    // The summary model costs 100× the run's: its 3,000 input tokens alone are $0.90, far over $0.05.
    const costOf = (u: Usage, model?: string) => SONNET_LIKE(u) * (model === "dear" ? 100 : 1);
    const ended = await run(provider, { max_cost_usd: 0.05 }, { summaryModel: "dear", costOf }).outcome;
    expect(requests.map((r) => r.model)).toEqual(["m"]);
    expect(ended.status).toBe("completed");
    expect(ended.usage.cost_usd).toBeLessThanOrEqual(0.05);
  });

  test("a summary whose model has no price is not made under a cost budget, and its unknown cost never lets the run go on unmetered", async () => {
    const { provider, requests } = scriptedModel({ summaryInput: 3000 });
    const costOf = (u: Usage, model?: string) => (model === "unpriced" ? null : SONNET_LIKE(u));
    const ended = await run(provider, { max_cost_usd: 0.05 }, { summaryModel: "unpriced", costOf }).outcome;
    expect(requests.map((r) => r.model)).toEqual(["m"]);
    expect(ended.usage.cost_usd).toBeLessThanOrEqual(0.05);
  });
});
