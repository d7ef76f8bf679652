import { expect, test } from "vitest";
import { redactedSetup } from "../../../src/runs/trace/redacted-setup.js";
import type { ModelSetup } from "../../../src/runs/trace/run-tracer.js";
import { createRedactor } from "../../../src/util/redact.js";

const setup = (hash: string): ModelSetup => ({
  hash,
  provider: "openai",
  model: "gpt-4o-mini",
  system: "Use the key sk-live-0123456789 for the billing API.",
  tools: [],
  context: { strategy: "full", keep_tool_results: 3, max_input_tokens: null },
  fixed_tokens: 10,
  max_tokens: 1024,
  cache_key: null,
});

test("a setup is redacted once per redactor and hash, and redacted for every run that asks again", () => {
  const redactor = createRedactor(["sk-live-0123456789"]);
  const first = redactedSetup(redactor, setup("a"));
  expect(first.system).toBe("Use the key [redacted] for the billing API.");
  expect(redactedSetup(redactor, setup("a"))).toBe(first);
  // Another redactor (another configuration's secrets) redacts for itself.
  expect(redactedSetup(createRedactor([]), setup("a")).system).toContain("sk-live-0123456789");
});

test("only a few setups are kept: past them the oldest is redacted again when asked", () => {
  const redactor = createRedactor(["sk-live-0123456789"]);
  const first = redactedSetup(redactor, setup("h0"));
  for (let i = 1; i <= 64; i++) redactedSetup(redactor, setup(`h${i}`));
  const again = redactedSetup(redactor, setup("h0"));
  expect(again).not.toBe(first);
  expect(again).toEqual(first);
});
