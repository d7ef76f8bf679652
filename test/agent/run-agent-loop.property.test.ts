import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { finishToolSpec } from "../../src/agent/finish-tool.js";
import { findOrphanToolCalls } from "../../src/core/history.js";
import { runAgentLoop } from "../../src/agent/run-agent-loop.js";
import { DEFAULT_CONTEXT } from "../../src/core/context-settings.js";
import { toolCallsOf, type AssistantBlock, type NewMessage } from "../../src/core/messages.js";
import type { ModelProvider, ModelRequest, ModelStopReason } from "../../src/core/model-provider.js";
import type { RunBudget } from "../../src/core/run-settings.js";
import { totalTokens, type Usage } from "../../src/core/usage.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { createToolBox } from "../../src/tools/tool-box.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";

/*
 * The loop against a scripted model (the agent sees a model only through
 * `ModelProvider`): whatever a model answers, under whatever budget, the run
 * ends with a valid history, makes at most max_steps calls, and makes no
 * call once a budget is spent (the grace call must fit in what is left).
 */

type Answer =
  | { kind: "text" }
  | { kind: "calls"; n: number; approve: boolean }
  | { kind: "finish"; valid: boolean; withOthers: boolean }
  | { kind: "cut"; stop: Extract<ModelStopReason, "max_tokens" | "refusal" | "content_filter"> }
  | { kind: "pause_turn" };

const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  fc.constant({ kind: "text" as const }),
  fc.record({ kind: fc.constant("calls" as const), n: fc.integer({ min: 1, max: 3 }), approve: fc.boolean() }),
  fc.record({ kind: fc.constant("finish" as const), valid: fc.boolean(), withOthers: fc.boolean() }),
  fc.record({
    kind: fc.constant("cut" as const),
    stop: fc.constantFrom("max_tokens" as const, "refusal" as const, "content_filter" as const),
  }),
  fc.constant({ kind: "pause_turn" as const }),
);

const budgetArb: fc.Arbitrary<RunBudget> = fc.record({
  max_steps: fc.integer({ min: 1, max: 8 }),
  max_tokens: fc.option(fc.integer({ min: 200, max: 20_000 }), { nil: null }),
  max_seconds: fc.constant(null),
  max_cost_usd: fc.option(fc.double({ min: 0.0005, max: 0.05, noNaN: true }), { nil: null }),
  grace_turn: fc.boolean(),
});

const registry = createToolRegistry([
  defineTool({
    name: "look",
    description: "Reads something.",
    input: z.object({ what: z.string() }),
    readOnly: true,
    execute: ({ what }) => `saw ${what}`,
  }),
  defineTool({
    name: "drop",
    description: "Deletes something.",
    input: z.object({ what: z.string() }),
    execute: ({ what }) => `dropped ${what}`,
  }),
]);
const finish = { result_schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } };
// $3 and $15 per million tokens, as claude-sonnet-4-6.
const costOf = (u: Usage) =>
  (u.input_tokens * 3 + u.output_tokens * 15 + u.cache_read_tokens * 0.3 + u.cache_write_tokens * 3.75) / 1e6;

/** A model that answers from the script (then in text), reporting its input as what it was sent weighs, roughly, and its output within maxTokens. */
function scriptedModel(script: Answer[], inputScale: number) {
  const calls: { request: ModelRequest; usedBefore: number; costBefore: number }[] = [];
  let used = 0;
  let cost = 0;
  let ids = 0;
  const provider: ModelProvider = {
    name: "mock",
    defaultModel: "m",
    buildRequest: (r) => r,
    formatHistory: (_s, messages) => ({ messages: [...messages] }),
    async generate(request) {
      calls.push({ request, usedBefore: used, costBefore: cost });
      const answer =
        request.toolChoice === "none"
          ? { kind: "text" as const }
          : (script[calls.length - 1] ?? { kind: "text" as const });
      const call = (name: string, input: Record<string, unknown>): AssistantBlock => ({
        type: "tool_call",
        id: `c${++ids}`,
        name,
        input,
      });
      let content: AssistantBlock[];
      let stopReason: ModelStopReason;
      switch (answer.kind) {
        case "text":
          [content, stopReason] = [[{ type: "text", text: "An answer." }], "end_turn"];
          break;
        case "calls":
          content = Array.from({ length: answer.n }, (_, i) =>
            call(answer.approve && i === 0 ? "drop" : "look", { what: `t${i}` }),
          );
          stopReason = "tool_use";
          break;
        case "finish":
          content = [
            call("finish", answer.valid ? { summary: "Done.", result: { n: 1 } } : { summary: "Done." }),
            ...(answer.withOthers ? [call("drop", { what: "x" })] : []),
          ];
          stopReason = "tool_use";
          break;
        case "cut":
          [content, stopReason] = [[{ type: "text", text: "Half" }, call("look", { what: "half" })], answer.stop];
          break;
        case "pause_turn":
          [content, stopReason] = [[{ type: "text", text: "Thinking." }], "pause_turn"];
          break;
      }
      const chars =
        JSON.stringify(request.messages).length + JSON.stringify(request.tools).length + (request.system?.length ?? 0);
      const usage: Usage = {
        input_tokens: Math.ceil((chars / 4) * inputScale),
        output_tokens: Math.min(request.maxTokens, 50),
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      };
      used += totalTokens(usage);
      cost += costOf(usage);
      return { content, stopReason, rawStopReason: stopReason, usage, model: "m" };
    },
  };
  return { provider, calls };
}

/** Every call answered by exactly one result, and only a paused run's pending calls left without one. */
function expectValidHistory(history: readonly NewMessage[], pending: string[]) {
  const results = history
    .filter((m) => m.role === "tool")
    .map((m) => (m.content[0] as { tool_call_id: string }).tool_call_id);
  expect(new Set(results).size).toBe(results.length);
  const calls = history.flatMap((m) => toolCallsOf(m).map((c) => c.id));
  for (const id of results) expect(calls).toContain(id);
  expect(
    findOrphanToolCalls(history)
      .map((c) => c.id)
      .sort(),
  ).toEqual([...pending].sort());
}

describe("the loop under any answers and any budget", () => {
  test("ends with a valid history, within max_steps model calls, and starts no call once a budget is spent", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(answerArb, { maxLength: 10 }),
        budgetArb,
        fc.double({ min: 0.8, max: 1.25, noNaN: true }),
        fc.boolean(),
        async (script, budget, inputScale, finishing) => {
          const { provider, calls } = scriptedModel(script, inputScale);
          const saved: NewMessage[] = [];
          const outcome = await runAgentLoop({
            provider,
            history: [{ role: "user", content: [{ type: "text", text: "Do the thing." }] }],
            save: async (messages) => void saved.push(...messages),
            toolBox: createToolBox({
              registry,
              allowedTools: ["look", "drop"],
              approvalRequired: ["drop"],
              loopTools: finishing ? [finishToolSpec(finish)] : [],
              workspaceDir: "/nowhere",
            }),
            call: {
              model: "m",
              system: null,
              toolChoice: "auto",
              context: DEFAULT_CONTEXT,
              cacheKey: null,
              maxTokens: 1024,
            },
            budget,
            finish: finishing ? finish : null,
            costOf,
            limits: { modelCallTimeoutMs: 60_000, modelStreamIdleMs: 60_000, graceWindowMs: 30_000 },
          });
          expect(outcome.steps).toBe(calls.length);
          expect(calls.length).toBeLessThanOrEqual(budget.max_steps);
          expectValidHistory(
            outcome.history!,
            outcome.status === "requires_action" ? outcome.pending.map((p) => p.tool_call_id) : [],
          );
          // Saved as it went, but for what nothing acted on: that goes with the run's end, a call among it with its answer.
          expect([...saved, ...(outcome.unsaved ?? [])]).toEqual(outcome.history!.slice(1));
          expect(findOrphanToolCalls(outcome.unsaved ?? [])).toEqual([]);
          for (const [i, { request, usedBefore, costBefore }] of calls.entries()) {
            // No call starts once a budget is spent, the grace call included: it must fit in what is left.
            if (budget.max_tokens !== null) expect(usedBefore, `call ${i + 1}`).toBeLessThan(budget.max_tokens);
            if (budget.max_cost_usd !== null) expect(costBefore, `call ${i + 1}`).toBeLessThan(budget.max_cost_usd);
            expect(request.maxTokens).toBeGreaterThan(0);
            // The grace call (tools off) is the run's last.
            if (request.toolChoice === "none") expect(i).toBe(calls.length - 1);
          }
          if (calls.at(-1)?.request.toolChoice === "none")
            expect(outcome).toMatchObject({
              status: "incomplete",
              stopReason: expect.stringMatching(/^(max_steps|budget)$/),
            });
        },
      ),
      { numRuns: 300 },
    );
  });
});
