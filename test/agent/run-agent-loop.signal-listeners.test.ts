import { getEventListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_CONTEXT } from "../../src/core/context-settings.js";
import type { NewMessage } from "../../src/core/messages.js";
import { runAgentLoop } from "../../src/agent/run-agent-loop.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolBox } from "../../src/tools/tool-box.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";
import { type FakeLlm, startFakeLlm } from "../support/fake-llm/server.js";
import { anthropicAgainst, openaiAgainst } from "../providers/fake-llm-providers.js";
import { user } from "../providers/histories.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

const STEPS = 12;

describe.each([
  { name: "anthropic", make: anthropicAgainst },
  { name: "openai", make: openaiAgainst },
])("the run's signal through the $name SDK", ({ make }) => {
  test(`holds no listener of any model call after ${STEPS} model calls`, async () => {
    const run = new AbortController();
    const listenersDuringCalls: number[] = [];
    llm.respond = () => {
      listenersDuringCalls.push(getEventListeners(run.signal, "abort").length);
      return listenersDuringCalls.length < STEPS
        ? { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }
        : { text: "Done." };
    };
    const saved: NewMessage[] = [];
    const result = await runAgentLoop({
      provider: make(llm),
      history: [user("Add one and one, many times.")],
      save: async (messages) => void saved.push(...messages),
      toolBox: createToolBox({
        registry: createToolRegistry(createBuiltinTools()),
        allowedTools: ["calculate"],
        workspaceDir: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
        defaultTimeoutMs: 1_000,
      }),
      call: {
        model: "test-model",
        system: null,
        toolChoice: "auto",
        context: DEFAULT_CONTEXT,
        cacheKey: null,
        maxTokens: 256,
      },
      // One more than the calls made: the last of max_steps would be a grace call.
      budget: { max_steps: STEPS + 1, max_tokens: null, max_seconds: null, max_cost_usd: null, grace_turn: true },
      finish: null,
      costOf: () => null,
      limits: { modelCallTimeoutMs: 60_000, modelStreamIdleMs: 60_000, graceWindowMs: 30_000 },
      signal: run.signal,
    });
    expect(result).toMatchObject({ status: "completed", steps: STEPS });
    // While a call is in flight, the run's signal holds one link to it, never one per call made so far.
    expect(Math.max(...listenersDuringCalls)).toBeLessThanOrEqual(1);
    expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
  });
});
