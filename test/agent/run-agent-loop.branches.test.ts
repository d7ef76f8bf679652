/**
 * The loop's branches:
 * approvals, budgets, the finish tool, the grace call, context while paused.
 * Each test failed before its fix.
 */
import { describe, expect, test } from "vitest";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolCallIdsIn, toolResultsIn, userTextsIn } from "../support/helpers/wire.js";
import { deleteNoteTool, effects, INVOICE_TOOL } from "../support/helpers/action-tools.js";
import { testTools } from "../support/helpers/test-tools.js";

const f = useLoopd({ tools: [...testTools(), deleteNoteTool()], listen: true });
const client = () => api(f.loopd.app);
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();

const toolsDisabled = (req: RecordedRequest) => {
  const choice = req.body.tool_choice;
  return req.api === "anthropic" ? (choice as { type?: string } | undefined)?.type === "none" : choice === "none";
};
const maxTokensOf = (req: RecordedRequest) => (req.body.max_tokens ?? req.body.max_completion_tokens) as number;

describe.each(["anthropic", "openai"] as const)(
  "every proposed call goes through the same decision (%s)",
  (provider) => {
    test("an invalid finish call beside a call that needs approval and a client tool's call: the run pauses for both, and nothing ran unapproved", async () => {
      effects.length = 0;
      const conv = await client().createConversation({
        provider,
        approval_required: ["delete_note"],
        client_tools: [INVOICE_TOOL],
      });
      f.llm.script({
        toolCalls: [
          { name: "finish", input: {} },
          { name: "delete_note", input: { title: "secret plans" } },
          { name: "create_invoice", input: { customer: "ACME" } },
        ],
      });
      const body = (
        await client().send(conv.id, { content: "Tidy up.", finish: { result_schema: { type: "object" } } })
      ).json();
      expect(effects).toEqual([]);
      expect(body.run.status).toBe("requires_action");
      expect(body.run.required_action.tool_calls.map((c: any) => [c.name, c.action])).toEqual([
        ["delete_note", "approve"],
        ["create_invoice", "submit_output"],
      ]);
      // The invalid finish call got its error, the others wait: the history holds a result for finish only.
      const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
      expect(results).toEqual([
        expect.objectContaining({
          name: "finish",
          is_error: true,
          content: expect.stringMatching(/^finish was not accepted: /),
        }),
      ]);
    });

    test("a valid finish call beside a call that needs approval ends the run without running it", async () => {
      effects.length = 0;
      const conv = await client().createConversation({ provider, approval_required: ["delete_note"] });
      f.llm.script({
        toolCalls: [
          { name: "delete_note", input: { title: "x" } },
          { name: "finish", input: { summary: "Done." } },
        ],
      });
      const body = (await client().send(conv.id, { content: "Finish.", finish: {} })).json();
      expect(effects).toEqual([]);
      expect(body.run).toMatchObject({ status: "completed", stop_reason: "finish" });
      expect(
        body.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.content[0].name, m.content[0].is_error]),
      ).toEqual([
        ["delete_note", true],
        ["finish", false],
      ]);
    });
  },
);

describe.each(["anthropic", "openai"] as const)("the finish nudge and the grace call (%s)", (provider) => {
  test("a nudge on the second-to-last step: the last call is a normal one, and a plain answer completes the run with result null", async () => {
    const conv = await client().createConversation({ provider });
    f.llm.script({ text: "Thinking aloud." }, { text: "Here it is." });
    const body = (await client().send(conv.id, { content: "Add.", finish: {}, budget: { max_steps: 2 } })).json();
    expect(body.run).toMatchObject({ status: "completed", stop_reason: "end_turn", steps: 2, result: null });
    expect(toolsDisabled(f.llm.requests[1]!)).toBe(false);
    expect(userTextsIn(f.llm.requests[1]!).at(-1)).toMatch(/call `finish`/);
  });

  test("a run whose own tool_choice names a tool, over its time budget when it goes on, ends budget/seconds after at most the grace call", async () => {
    const conv = await client().createConversation({ provider, approval_required: ["delete_note"] });
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "t" } }] });
    // (With "none", loopd itself refuses the call: tools were not offered on that turn.)
    const paused = (
      await client().send(conv.id, {
        content: "Go.",
        tool_choice: { name: "delete_note" },
        budget: { max_seconds: 30 },
      })
    ).json();
    expect(paused.run.status).toBe("requires_action");
    // The run's clock ran out while it was... not paused: pretend it started long ago.
    await f.database.query({
      name: "review_backdate",
      text: "update runs set created_at = now() - interval '1 hour' where id = $1",
      values: [paused.run.id],
    });
    const calls = f.llm.requests.length;
    f.llm.script({ text: "Out of time." });
    const res = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${paused.run.id}/actions`,
      payload: { approvals: [{ tool_call_id: paused.run.required_action.tool_calls[0].tool_call_id, approve: true }] },
    });
    expect(res.json().run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "seconds" });
    // The grace call is for a run over its steps, tokens or cost; for time there is a short grace window, and none is left.
    expect(f.llm.requests.length - calls).toBeLessThanOrEqual(1);
    if (f.llm.requests.length > calls) expect(toolsDisabled(f.llm.requests.at(-1)!)).toBe(true);
  });
});

describe.each(["anthropic", "openai"] as const)("budgets weigh a call before it starts (%s)", (provider) => {
  /** A model that always wants another tool call and writes as much as it is allowed to; the fake counts the input it is sent. */
  const greedy = () => {
    f.llm.respond = (req) =>
      toolsDisabled(req)
        ? { text: "Here is what I have.", usage: { output: maxTokensOf(req) } }
        : { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }], usage: { output: maxTokensOf(req) } };
  };
  const totalOf = (u: any) => u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
  /** What a first call's input weighs, as loopd estimates it. */
  const inputOf = async (convId: string) =>
    (await get(`/conversations/${convId}/context`)).estimated_input_tokens as number;

  test("max_tokens: each call asks for no more output than is left, a call that cannot fit is not made, and the grace call fits", async () => {
    const conv = await client().createConversation({ provider, caching: false });
    const input = await inputOf(conv.id);
    const max = input * 5;
    greedy();
    const body = (await client().send(conv.id, { content: "Loop.", budget: { max_tokens: max } })).json();
    f.llm.respond = null;
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "tokens" });
    expect(body.run.steps).toBeGreaterThanOrEqual(2);
    // The last call is the grace call (tools off), and it fitted.
    expect(toolsDisabled(f.llm.requests.at(-1)!)).toBe(true);
    // The worst case the README states: the error of the input estimates (within 15%).
    expect(totalOf(body.run.usage)).toBeLessThanOrEqual(max * 1.15);
    let used = 0;
    for (const [i, req] of f.llm.requests.entries()) {
      expect(maxTokensOf(req), `call ${i + 1}`).toBeLessThanOrEqual(max - used);
      used += req.counted!.input + maxTokensOf(req);
    }
  });

  test("max_cost_usd: a call whose cost would pass what is left is not made; the output is capped by what is left", async () => {
    const conv = await client().createConversation({
      provider,
      model: provider === "anthropic" ? "claude-sonnet-4-6" : "gpt-4o",
      caching: false,
    });
    const input = await inputOf(conv.id);
    // About four calls' worth of input at the model's input price (claude-sonnet-4-6: $3/M; gpt-4o: $2.50/M).
    const max = (input * 4 * (provider === "anthropic" ? 3 : 2.5)) / 1e6;
    greedy();
    const body = (await client().send(conv.id, { content: "Loop.", budget: { max_cost_usd: max } })).json();
    f.llm.respond = null;
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "cost" });
    expect(body.run.steps).toBeGreaterThanOrEqual(1);
    expect(body.run.usage.cost_usd).toBeLessThanOrEqual(max * 1.15);
  });
});

describe("the tool calls of one answer", () => {
  test("two calls with one id (a misbehaving OpenAI-compatible server): one call runs, one result answers it", async () => {
    const conv = await client().createConversation({ provider: "openai" });
    f.llm.script(
      {
        toolCalls: [
          { id: "call_same", name: "calculate", input: { expression: "1+1" } },
          { id: "call_same", name: "calculate", input: { expression: "2+2" } },
        ],
      },
      { text: "Done." },
    );
    const body = (await client().send(conv.id, { content: "Add." })).json();
    expect(body.run.status).toBe("completed");
    expect(toolCallIdsIn(f.llm.requests[1]!)).toEqual(["call_same"]);
    expect(toolResultsIn(f.llm.requests[1]!).map((r) => r.id)).toEqual(["call_same"]);
  });
});

describe("conversation settings", () => {
  test("a client tool may not be named finish: 400 naming it", async () => {
    const res = await f.loopd.app.inject({
      method: "POST",
      url: "/conversations",
      payload: { client_tools: [{ ...INVOICE_TOOL, name: "finish" }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/finish/);
    expect(res.json().error.details.field).toMatch(/client_tools/);
  });

  test("while a run is paused, GET /context shows a request whose calls all have their results", async () => {
    const conv = await client().createConversation({ provider: "anthropic", approval_required: ["delete_note"] });
    f.llm.script({
      toolCalls: [
        { name: "calculate", input: { expression: "1+1" } },
        { name: "delete_note", input: { title: "t" } },
      ],
    });
    const paused = (await client().send(conv.id, { content: "Go." })).json();
    expect(paused.run.status).toBe("requires_action");
    const context = await get(`/conversations/${conv.id}/context?format=anthropic`);
    const messages = context.request.messages as any[];
    const calls = messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id) : [],
    );
    const results = messages.flatMap((m) =>
      Array.isArray(m.content)
        ? m.content.filter((b: any) => b.type === "tool_result").map((b: any) => b.tool_use_id)
        : [],
    );
    expect(results.sort()).toEqual(calls.sort());
  });
});
