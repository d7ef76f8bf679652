import { describe, expect, test } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/tools/define-tool.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { collectEvents } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolResultsIn } from "../support/helpers/wire.js";
import { testTools } from "../support/helpers/test-tools.js";

/*
 * Runs keep their promises: a queued run's clock starts when it starts, a
 * tool the turn's tool_choice did not offer is never run, and a token budget
 * that affords a tool step and the grace call gets both.
 */

/** The contract's words for a call to a tool the turn did not offer. */
const NOT_OFFERED_RESULT = "tool call was not executed: tools were not offered on this turn";

/** How many times `count` ran. */
let counted = 0;
const count = defineTool({
  name: "count",
  description: "Counts its calls.",
  input: z.object({}),
  execute: () => `count ${++counted}`,
});
const held = heldTool();
const f = useLoopd({ tools: [...testTools(), count, held.tool], listen: true });

const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const json = async (res: Promise<Response> | Response): Promise<any> => (await res).json();
const getJson = (path: string) => json(fetch(`${f.loopd.url}${path}`));
const createConversation = (body: Record<string, unknown>) => json(post("/conversations", body));
const send = (convId: string, body: Record<string, unknown>) => json(post(`/conversations/${convId}/messages`, body));

async function runEnded(convId: string, runId: string): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = await getJson(`/conversations/${convId}/runs/${runId}`);
    if (!["queued", "running"].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
  test('tool_choice "none": a model that calls a tool anyway gets its call answered "not offered", the tool never runs, and the run goes on', async () => {
    const conv = await createConversation({ provider });
    counted = 0;
    f.llm.script({ toolCalls: [{ name: "count", input: {} }] }, { text: "No tools, then." });
    const body = await send(conv.id, { content: "Count, please.", tool_choice: "none" });
    expect(body.run).toMatchObject({ status: "completed", stop_reason: "end_turn", steps: 2 });
    expect(counted).toBe(0);
    const result = body.messages.find((m: any) => m.role === "tool").content[0];
    expect(result).toMatchObject({ name: "count", is_error: true, content: NOT_OFFERED_RESULT });
    // The model was told, in the provider's own format.
    expect(toolResultsIn(f.llm.requests[1]!)).toEqual([
      expect.objectContaining({ content: expect.stringContaining(NOT_OFFERED_RESULT), isError: true }),
    ]);
    const events = await collectRunEvents(conv.id, body.run.id);
    expect(events).toContain("run.completed");
    expect(events).not.toContain("tool_call.started");
  });

  test("a named tool_choice: the first turn's call to another tool is not run; the named one is", async () => {
    const conv = await createConversation({ provider });
    counted = 0;
    f.llm.script(
      {
        toolCalls: [
          { name: "count", input: {} },
          { name: "calculate", input: { expression: "6*7" } },
        ],
      },
      { text: "42." },
    );
    const body = await send(conv.id, { content: "Work it out.", tool_choice: { name: "calculate" } });
    expect(body.run).toMatchObject({ status: "completed", steps: 2 });
    expect(counted).toBe(0);
    const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
    expect(results.sort((a: any, b: any) => b.name.localeCompare(a.name))).toEqual([
      expect.objectContaining({
        name: "count",
        is_error: true,
        content: expect.stringContaining("tools were not offered on this turn"),
      }),
      expect.objectContaining({ name: "calculate", is_error: false, content: expect.stringContaining("42") }),
    ]);
  });

  test("a token budget of 2.5 calls affords a tool step and the grace call: both are made, within the budget", async () => {
    // A system prompt big enough that the estimate's shares are not lost in rounding: about 2,000 tokens a call.
    const system = `You are a careful assistant. ${Array.from({ length: 300 }, (_, i) => `rule${i} applies;`).join(" ")}`;
    const conv = await createConversation({ provider, system, caching: false });
    // One call, measured: what the fake counts of the request (as a real API would) and its answer; the conversation's estimates learn from it.
    f.llm.script({ text: "Counted." });
    const measured = (await send(conv.id, { content: "Count." })).run.usage;
    const perCall = tokensOf(measured);
    const budget = Math.round(2.5 * perCall);

    counted = 0;
    f.llm.reset();
    f.llm.respond = (req) =>
      toolsOff(req) ? { text: "Here is what I have." } : { toolCalls: [{ name: "count", input: {} }] };
    const body = await send(conv.id, { content: "Count.", budget: { max_tokens: budget } });
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "budget",
      budget_exceeded: "tokens",
      steps: 2,
    });
    // The tool step was made and its tool ran; the second call is the grace call.
    expect(counted).toBe(1);
    expect(f.llm.requests.map(toolsOff)).toEqual([false, true]);
    // Cache reads count too (OpenAI caches a long prefix on its own).
    const used = tokensOf(body.run.usage);
    expect(used).toBeLessThanOrEqual(budget);
    // Two calls' worth of tokens of the 2.5 (the grace call reads a little more than the first).
    expect(used).toBeGreaterThan(2 * perCall);
    console.log(
      `2.5-call budget (${provider}): one call ${perCall} tokens, budget ${budget}, used ${used} in ${body.run.steps} calls`,
    );
  });
});

test("a queued run's clock starts when it starts: max_seconds 1 behind a run that works for longer still does its work", async () => {
  const conv = await createConversation({ provider: "openai" });
  held.reset();
  f.llm.script(
    { toolCalls: [{ name: "hold", input: {} }] },
    { text: "The first is done." },
    { toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] },
    { text: "4." },
  );
  const first = (await send(conv.id, { content: "Work a while.", wait: false })).run;
  await held.entered();
  const queued = (
    await send(conv.id, { content: "Then this.", on_busy: "enqueue", wait: false, budget: { max_seconds: 1 } })
  ).run;
  expect(queued.status).toBe("queued");
  // The time being tested: the queued run waits longer than its whole max_seconds before it can start.
  await new Promise((r) => setTimeout(r, 1_300));
  held.release();
  expect(await runEnded(conv.id, first.id)).toMatchObject({ status: "completed" });
  const run = await runEnded(conv.id, queued.id);
  expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn", steps: 2 });
  expect(run.budget_exceeded ?? null).toBeNull();
});

const tokensOf = (u: {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}) => u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;

/** Whether a recorded model request disabled tools (each API says it its own way). */
function toolsOff(req: { api: string; body: any }): boolean {
  const choice = req.body.tool_choice;
  return req.api === "anthropic" ? choice?.type === "none" : choice === "none";
}

/** The run's event types, from its log. */
async function collectRunEvents(convId: string, runId: string): Promise<string[]> {
  return (await collectEvents(await fetch(`${f.loopd.url}/conversations/${convId}/runs/${runId}/events`))).map(
    (e) => e.event,
  );
}
