import { describe, expect, test } from "vitest";
import { prepareStep, type CallSettings } from "../../src/agent/prepare-step.js";
import { createRunClock } from "../../src/agent/run-clock.js";
import { createRunState } from "../../src/agent/run-state.js";
import { DEFAULT_CONTEXT } from "../../src/core/context-settings.js";
import type { ToolChoice } from "../../src/core/model-provider.js";

const tools = [{ name: "look", description: "Reads.", inputSchema: { type: "object" } }];
const settings = (toolChoice: ToolChoice = { name: "look" }, withTools = true): CallSettings => ({
  model: "m",
  system: "Be brief.",
  tools: withTools ? tools : [],
  toolChoice,
  context: DEFAULT_CONTEXT,
  fixedTokens: 40,
  cacheKey: "conv_1",
  maxTokens: 4096,
});
const stateAt = (stepsDone: number) =>
  createRunState({
    history: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    save: async () => {},
    context: DEFAULT_CONTEXT,
    fixedTokens: 40,
    stepsDone,
    costOf: () => null,
    tokenRatio: 1.2,
  });
const clock = createRunClock({ startedAt: Date.now(), maxSeconds: null, modelCallTimeoutMs: 600_000 });
const go = { type: "go" as const, maxTokens: 1000 };

describe("prepareStep: what the next call is", () => {
  test("the client's tool choice binds the run's first call only; later calls are auto, or stay none", () => {
    expect(prepareStep({ state: stateAt(0), settings: settings(), gate: go, clock }).request.toolChoice).toEqual({
      name: "look",
    });
    expect(prepareStep({ state: stateAt(1), settings: settings(), gate: go, clock }).request.toolChoice).toBe("auto");
    expect(prepareStep({ state: stateAt(1), settings: settings("none"), gate: go, clock }).request.toolChoice).toBe(
      "none",
    );
    expect(
      prepareStep({ state: stateAt(0), settings: settings("required", false), gate: go, clock }).request.toolChoice,
    ).toBe("none");
  });

  test("the grace call is explicit: tools still declared, tool choice none, the budget named", () => {
    const step = prepareStep({
      state: stateAt(3),
      settings: settings(),
      gate: { type: "grace", over: "tokens", maxTokens: 300 },
      clock,
    });
    expect(step.grace).toEqual({ over: "tokens" });
    expect(step.request).toMatchObject({ toolChoice: "none", tools, maxTokens: 300 });
    expect(prepareStep({ state: stateAt(3), settings: settings(), gate: go, clock }).grace).toBeNull();
  });

  test("its record is what the trace keeps: what the request was built from, this call's output limit beside the run's", () => {
    const step = prepareStep({ state: stateAt(2), settings: settings(), gate: go, clock });
    expect(step.step).toBe(3);
    expect(step.record).toEqual({
      history_length: 1,
      context: DEFAULT_CONTEXT,
      token_ratio: 1.2,
      fixed_tokens: 40,
      model: "m",
      system: "Be brief.",
      tools,
      tool_choice: "auto",
      max_tokens: 1000,
      max_tokens_limit: 4096,
      cache_key: "conv_1",
    });
    expect(step.request.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hello" }] }]);
    expect(step.rawTokens).toBeGreaterThan(40);
  });
});
