import { getEventListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { runAgentLoop } from "../../src/agent/run-agent-loop.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
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
      return listenersDuringCalls.length < STEPS ? { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] } : { text: "Done." };
    };
    const saved: NewMessage[] = [];
    const result = await runAgentLoop({
      provider: make(llm),
      model: "test-model",
      system: null,
      history: [user("Add one and one, many times.")],
      save: async (messages) => void saved.push(...messages),
      registry: createToolRegistry(createBuiltinTools()),
      allowedTools: ["calculate"],
      // One more than the calls made: the last of max_steps would be a grace call.
      maxSteps: STEPS + 1,
      maxTokens: 256,
      workspaceDir: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
      toolTimeoutMs: 1_000,
      signal: run.signal,
    });
    expect(result).toMatchObject({ status: "completed", steps: STEPS });
    // While a call is in flight, the run's signal holds one link to it, never one per call made so far.
    expect(Math.max(...listenersDuringCalls)).toBeLessThanOrEqual(1);
    expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
  });
});
