import { expect, test } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/tools/define-tool.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const shout = (name: string, maxResultChars?: number) =>
  defineTool({
    name,
    description: `Returns n characters (${name}).`,
    input: z.object({ n: z.number().int() }),
    ...(maxResultChars && { maxResultChars }),
    execute: ({ n }) => "x".repeat(n),
  });

// `loud` caps itself at 5,000 and the configuration caps it at 1,000; `plain` gets the configured default, `quiet` keeps its own.
const f = useLoopd({
  tools: [shout("loud", 5000), shout("plain"), shout("quiet", 600)],
  env: { TOOL_RESULT_MAX_CHARS: "2000", TOOL_RESULT_MAX_CHARS_BY_TOOL: "loud=1000" },
});

test("TOOL_RESULT_MAX_CHARS_BY_TOOL wins over a tool's own cap, TOOL_RESULT_MAX_CHARS is the default, a tool's own cap stays otherwise", async () => {
  const lengths: Record<string, number> = {};
  for (const name of ["loud", "plain", "quiet"]) {
    const conv = await api(f.loopd.app).createConversation({ provider: "mock", tools: [name] });
    // The mock calls an offered tool spelt out as `name {json}`.
    const body = (await api(f.loopd.app).send(conv.id, { content: `${name} {"n": 20000}` })).json();
    const result = body.messages.find((m: any) => m.role === "tool").content[0];
    expect(result.content).toMatch(/\[… \d+ characters left out …\]/);
    lengths[name] = result.content.length;
  }
  expect(lengths.loud).toBeLessThanOrEqual(1000);
  expect(lengths.loud).toBeGreaterThan(900);
  expect(lengths.plain).toBeLessThanOrEqual(2000);
  expect(lengths.plain).toBeGreaterThan(1900);
  expect(lengths.quiet).toBeLessThanOrEqual(600);
  expect(lengths.quiet).toBeGreaterThan(500);
});
