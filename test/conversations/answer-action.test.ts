import { describe, expect, test } from "vitest";
import { z } from "zod";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { api } from "../support/helpers/api.js";
import { collectEvents, isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";
import { deleteNoteTool, effects, INVOICE_TOOL } from "../support/helpers/action-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolResultsIn } from "../support/helpers/wire.js";
import { rowCounts } from "../support/helpers/row-counts.js";

const f = useLoopd({
  listen: true,
  // Sweeps (and so the expiry of unanswered pauses) about every second.
  env: { RUN_LEASE_MS: "4000" },
  tools: [
    ...createBuiltinTools(),
    deleteNoteTool(),
    defineTool({
      name: "transfer",
      description: "Moves money; above 100 it needs a person's yes.",
      input: z.object({ amount: z.number() }),
      needsApproval: ({ amount }) => amount > 100,
      execute: ({ amount }) => {
        effects.push(`transferred ${amount}`);
        return `transferred ${amount}`;
      },
    }),
  ],
});

const client = () => api(f.loopd.app);
const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  f.loopd.app.inject({ method: "POST", url, payload: payload as object, headers });
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();
const answer = (conv: string, run: string, body: unknown, headers: Record<string, string> = {}) =>
  post(`/conversations/${conv}/runs/${run}/actions`, body, headers);

/** Everything an answer could change, to show a refused one changed nothing. */
async function stateOf(conv: string, run: string) {
  return {
    run: await get(`/conversations/${conv}/runs/${run}`),
    messages: await client().history(conv),
    rows: await rowCounts(f.database),
    effects: [...effects],
  };
}

describe.each(["anthropic", "openai"] as const)("approvals and client tools through %s", (provider) => {
  const newConversation = (extra: Record<string, unknown> = {}) =>
    client().createConversation({
      provider,
      approval_required: ["delete_note"],
      client_tools: [INVOICE_TOOL],
      ...extra,
    });

  /** A run paused on one call to approve (delete_note) and one client call (create_invoice), after a free one (calculate). */
  async function pausedOnMixedStep() {
    const conv = await newConversation();
    f.llm.script({
      text: "On it.",
      toolCalls: [
        { name: "calculate", input: { expression: "6*7" } },
        { name: "delete_note", input: { title: "old" } },
        { name: "create_invoice", input: { customer: "ACME" } },
      ],
    });
    const res = await client().send(conv.id, { content: "Tidy up and bill ACME" });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const calls = body.messages[1].content.filter((b: any) => b.type === "tool_call");
    return { conv, body, run: body.run, calls: calls as { id: string; name: string }[] };
  }

  test("a mixed step runs the free call at once and pauses for the other two; the answer goes on in the same run", async () => {
    effects.length = 0;
    const { conv, body, run, calls } = await pausedOnMixedStep();
    const [calc, del, invoice] = calls;
    expect(run).toMatchObject({ status: "requires_action", stop_reason: null, steps: 1, completed_at: null });
    expect(run.required_action.tool_calls).toEqual([
      { tool_call_id: del!.id, name: "delete_note", input: { title: "old" }, action: "approve" },
      { tool_call_id: invoice!.id, name: "create_invoice", input: { customer: "ACME" }, action: "submit_output" },
    ]);
    const expiresIn = Date.parse(run.required_action.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(3_500_000);
    expect(expiresIn).toBeLessThanOrEqual(3_600_000);
    // The free call ran and was saved; the others did not run.
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(body.messages[2].content[0]).toMatchObject({ tool_call_id: calc!.id, is_error: false });
    expect(effects).toEqual([]);
    // The model was told about the client tool like any other.
    expect(JSON.stringify(f.llm.requests[0]!.body.tools)).toContain("create_invoice");
    expect(f.llm.requests).toHaveLength(1);
    // Shown while it waits; it holds the conversation and no lease.
    expect(await get(`/conversations/${conv.id}/runs/${run.id}`)).toMatchObject({
      status: "requires_action",
      required_action: run.required_action,
    });
    expect((await get(`/conversations/${conv.id}`)).active_run_id).toBe(run.id);
    const row = await f.loopd.services.store.runs.get(run.id);
    expect([row!.leaseOwner, row!.leaseExpiresAt]).toEqual([null, null]);

    f.llm.script({ text: "Deleted the note and billed ACME (INV-42)." });
    const res = await answer(conv.id, run.id, {
      approvals: [{ tool_call_id: del!.id, approve: true }],
      tool_outputs: [{ tool_call_id: invoice!.id, output: "INV-42 created" }],
      actor: "user:ada",
    });
    expect(res.statusCode).toBe(200);
    const done = res.json();
    expect(done.run).toMatchObject({ id: run.id, status: "completed", stop_reason: "end_turn", steps: 2 });
    expect(done.run.required_action).toBeUndefined();
    expect(done.output_text).toBe("Deleted the note and billed ACME (INV-42).");
    // What this answer appended: the client's output, the approved call's result, the answer.
    expect(done.messages.map((m: any) => [m.role, m.content[0].tool_call_id ?? null])).toEqual([
      ["tool", invoice!.id],
      ["tool", del!.id],
      ["assistant", null],
    ]);
    expect(effects).toEqual(["deleted old"]);
    // The next request carries all three results in the model's order, ids intact.
    const results = toolResultsIn(f.llm.requests[1]!);
    expect(results.map((r) => r.id)).toEqual([calc!.id, del!.id, invoice!.id]);
    expect(results[1]!.content).toBe("note old deleted");
    expect(results[2]!.content).toBe("INV-42 created");

    // One run, one gap-free event log across the pause, with the decision on record.
    const events = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.event);
    expect(types.filter((t) => t.startsWith("run."))).toEqual([
      "run.created",
      "run.requires_action",
      "run.action_answered",
      "run.completed",
    ]);
    const answered = events.find((e) => e.event === "run.action_answered")!;
    expect(answered.data).toEqual({
      actor: "user:ada",
      approvals: [{ tool_call_id: del!.id, approve: true }],
      tool_outputs: [{ tool_call_id: invoice!.id, is_error: false }],
    });
    expect(events.find((e) => e.event === "run.requires_action")!.data.run.required_action).toEqual(
      run.required_action,
    );
  });

  test("a denial is an error result with the reason that tells the model not to retry; the call never runs", async () => {
    effects.length = 0;
    const { conv, run, calls } = await pausedOnMixedStep();
    const [, del, invoice] = calls;
    f.llm.script({ text: "Understood, I kept the note." });
    const res = await answer(conv.id, run.id, {
      approvals: [{ tool_call_id: del!.id, approve: false, reason: "keep that note" }],
      tool_outputs: [{ tool_call_id: invoice!.id, output: "ACME is not a customer", is_error: true }],
    });
    expect(res.json().run.status).toBe("completed");
    expect(effects).toEqual([]);
    const results = toolResultsIn(f.llm.requests[1]!);
    const denied = results.find((r) => r.id === del!.id)!;
    expect(denied.isError).toBe(true);
    expect(denied.content).toContain("declined");
    expect(denied.content).toContain("keep that note");
    expect(denied.content).toMatch(/do not retry/i);
    expect(results.find((r) => r.id === invoice!.id)!.isError).toBe(true);
  });

  test("approval can depend on the input: a small transfer runs, a large one waits", async () => {
    effects.length = 0;
    const conv = await newConversation({ approval_required: [] });
    f.llm.script({
      toolCalls: [
        { name: "transfer", input: { amount: 50 } },
        { name: "transfer", input: { amount: 500 } },
      ],
    });
    const { run, messages } = (await client().send(conv.id, { content: "Pay both" })).json();
    expect(run.status).toBe("requires_action");
    expect(run.required_action.tool_calls).toEqual([
      expect.objectContaining({ name: "transfer", input: { amount: 500 }, action: "approve" }),
    ]);
    expect(effects).toEqual(["transferred 50"]);
    expect(messages.at(-1).content[0].content).toBe("transferred 50");
    f.llm.script({ text: "Paid." });
    const done = (
      await answer(conv.id, run.id, {
        approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
      })
    ).json();
    expect(done.run.status).toBe("completed");
    expect(effects).toEqual(["transferred 50", "transferred 500"]);
  });

  test("every bad answer is a 4xx naming the problem, and changes nothing", async () => {
    effects.length = 0;
    const { conv, run, calls } = await pausedOnMixedStep();
    const [calc, del, invoice] = calls;
    const other = await newConversation();
    const before = await stateOf(conv.id, run.id);
    const approve = { tool_call_id: del!.id, approve: true };
    const output = { tool_call_id: invoice!.id, output: "INV-1" };
    const cases: { body: unknown; status: number; code: string; names?: string[] }[] = [
      { body: { approvals: [approve] }, status: 400, code: "invalid_request", names: [invoice!.id] },
      {
        body: { approvals: [approve, { tool_call_id: "toolu_nope", approve: true }], tool_outputs: [output] },
        status: 400,
        code: "invalid_request",
        names: ["toolu_nope"],
      },
      {
        body: { approvals: [approve, { tool_call_id: invoice!.id, approve: true }] },
        status: 400,
        code: "invalid_request",
        names: [invoice!.id],
      },
      {
        body: { tool_outputs: [output, { tool_call_id: del!.id, output: "done" }] },
        status: 400,
        code: "invalid_request",
        names: [del!.id],
      },
      {
        body: { approvals: [approve, approve], tool_outputs: [output] },
        status: 400,
        code: "invalid_request",
        names: [del!.id],
      },
      {
        body: { approvals: [{ tool_call_id: calc!.id, approve: true }, approve], tool_outputs: [output] },
        status: 400,
        code: "invalid_request",
        names: [calc!.id],
      },
      {
        body: { approvals: [{ ...approve, approve: "yes" }], tool_outputs: [output] },
        status: 400,
        code: "invalid_request",
      },
      {
        body: { approvals: [approve], tool_outputs: [output], approve_all: true },
        status: 400,
        code: "invalid_request",
      },
    ];
    for (const c of cases) {
      const res = await answer(conv.id, run.id, c.body);
      expect(res.statusCode, JSON.stringify(c.body)).toBe(c.status);
      const { error } = res.json();
      expect(error.code).toBe(c.code);
      for (const id of c.names ?? []) expect(error.message).toContain(id);
    }
    // The run of another conversation, and a run that does not exist: not found.
    expect((await answer(other.id, run.id, { approvals: [approve], tool_outputs: [output] })).statusCode).toBe(404);
    expect((await answer(conv.id, "run_missing", { approvals: [approve], tool_outputs: [output] })).statusCode).toBe(
      404,
    );
    expect(await stateOf(conv.id, run.id)).toEqual(before);

    // A run that is not waiting: 409, nothing changes.
    f.llm.script({ text: "Done." });
    expect((await answer(conv.id, run.id, { approvals: [approve], tool_outputs: [output] })).statusCode).toBe(200);
    const after = await stateOf(conv.id, run.id);
    const late = await answer(conv.id, run.id, { approvals: [approve], tool_outputs: [output] });
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toMatchObject({
      code: "run_not_waiting",
      details: { run_id: run.id, status: "completed" },
    });
    expect(await stateOf(conv.id, run.id)).toEqual(after);
  });

  test("two answers at once: one wins, the other is 409 run_not_waiting, and the approved call runs once", async () => {
    effects.length = 0;
    const { conv, run, calls } = await pausedOnMixedStep();
    const [, del, invoice] = calls;
    f.llm.script({ text: "Done." });
    const body = {
      approvals: [{ tool_call_id: del!.id, approve: true }],
      tool_outputs: [{ tool_call_id: invoice!.id, output: "INV-7" }],
    };
    const both = await Promise.all([answer(conv.id, run.id, body), answer(conv.id, run.id, body)]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(both.find((r) => r.statusCode === 409)!.json().error.code).toBe("run_not_waiting");
    expect(effects).toEqual(["deleted old"]);
    const history = await client().history(conv.id);
    expect(
      history
        .filter((m) => m.role === "tool")
        .map((m) => m.content[0].tool_call_id)
        .sort(),
    ).toEqual(calls.map((c) => c.id).sort());
  });

  test("Idempotency-Key: a retry returns the same answer and runs nothing twice; another body with the key is refused", async () => {
    effects.length = 0;
    const { conv, run, calls } = await pausedOnMixedStep();
    const [, del, invoice] = calls;
    f.llm.script({ text: "Done." });
    const body = {
      approvals: [{ tool_call_id: del!.id, approve: true }],
      tool_outputs: [{ tool_call_id: invoice!.id, output: "INV-8" }],
    };
    const key = { "idempotency-key": `answer-${provider}` };
    const first = await answer(conv.id, run.id, body, key);
    const again = await answer(conv.id, run.id, body, key);
    expect([first.statusCode, again.statusCode]).toEqual([200, 200]);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json().messages.map((m: any) => m.id)).toEqual(first.json().messages.map((m: any) => m.id));
    expect(effects).toEqual(["deleted old"]);
    const changed = await answer(conv.id, run.id, { ...body, actor: "someone else" }, key);
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe("idempotency_key_reused");
  });

  test("the stream of a message ends at run.requires_action; the answer's stream goes on with the next event id", async () => {
    const conv = await newConversation();
    f.llm.script({ toolCalls: [{ name: "create_invoice", input: { customer: "ACME" } }] });
    const first = await collectEvents(
      await fetch(`${f.loopd.url}/conversations/${conv.id}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "Bill ACME", stream: true }),
      }),
    );
    const paused = first.at(-1)!;
    expect(paused.event).toBe("run.requires_action");
    const { run } = paused.data;
    expect(run.status).toBe("requires_action");
    const [call] = run.required_action.tool_calls;

    f.llm.script({ text: "Billed." });
    const rest = await collectEvents(
      await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/actions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool_outputs: [{ tool_call_id: call.tool_call_id, output: "INV-9" }], stream: true }),
      }),
    );
    expect(rest[0]).toMatchObject({ id: paused.id + 1, event: "run.action_answered" });
    expect(rest.map((e) => e.id)).toEqual(rest.map((_, i) => paused.id + 1 + i));
    expect(rest.find((e) => e.event === "message.created")!.data.message.content[0]).toMatchObject({
      tool_call_id: call.tool_call_id,
      content: "INV-9",
    });
    expect(rest.at(-1)).toMatchObject({ event: "run.completed" });
  });

  test("a new message while a run waits: the pending calls are answered 'not executed', the run ends superseded, the new one runs", async () => {
    effects.length = 0;
    const { conv, run, calls } = await pausedOnMixedStep();
    f.llm.script({ text: "Sure, something else." });
    const res = await client().send(conv.id, { content: "Never mind, do something else" });
    expect(res.statusCode).toBe(200);
    expect(res.json().run).toMatchObject({ status: "completed" });
    expect(await get(`/conversations/${conv.id}/runs/${run.id}`)).toMatchObject({
      status: "incomplete",
      stop_reason: "superseded",
    });
    expect(effects).toEqual([]);
    // The new run's model request is a valid history: every call answered, the user message after the results.
    const results = toolResultsIn(f.llm.requests[1]!);
    expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id));
    for (const r of results.slice(1)) expect(r.content).toContain("the user sent a new message instead");
    const events = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`));
    expect(events.at(-1)).toMatchObject({ event: "run.incomplete", data: { run: { stop_reason: "superseded" } } });
  });

  test("cancel while waiting: the pending calls get 'cancelled' results and the run ends cancelled", async () => {
    const { conv, run, calls } = await pausedOnMixedStep();
    const res = await post(`/conversations/${conv.id}/runs/${run.id}/cancel`, {});
    expect(res.json()).toMatchObject({ status: "cancelled", stop_reason: "cancelled" });
    const history = await client().history(conv.id);
    const results = history.filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(results.map((r) => r.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(results.slice(1).every((r) => r.is_error && r.content.startsWith("cancelled"))).toBe(true);
    expect((await get(`/conversations/${conv.id}`)).active_run_id).toBeNull();
    f.llm.script({ text: "Hello again." });
    expect((await client().send(conv.id, { content: "Hi" })).json().run.status).toBe("completed");
  });

  test("no answer in time: the pending calls are given up and the run ends action_expired, with a valid history", async () => {
    const conv = await newConversation({ action_timeout_s: 1 });
    f.llm.script({ toolCalls: [{ name: "create_invoice", input: { customer: "ACME" } }] });
    const { run } = (await client().send(conv.id, { content: "Bill ACME" })).json();
    expect(run.status).toBe("requires_action");
    expect(Date.parse(run.required_action.expires_at) - Date.parse(run.created_at)).toBeLessThan(2_000);
    // The sweeper ends it; its stream says so.
    const events = await collectEvents(
      await fetch(
        `${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events?after=${await lastEventId(conv.id, run.id)}`,
      ),
    );
    expect(events.at(-1)).toMatchObject({
      event: "run.incomplete",
      data: { run: { status: "incomplete", stop_reason: "action_expired" } },
    });
    const expired = (await client().history(conv.id)).at(-1);
    expect(expired.content[0]).toMatchObject({
      tool_call_id: run.required_action.tool_calls[0].tool_call_id,
      is_error: true,
      content: "not executed: no answer in time",
    });
    f.llm.script({ text: "The invoice was not created." });
    expect((await client().send(conv.id, { content: "Did it work?" })).json().run.status).toBe("completed");
  });
});

async function lastEventId(conv: string, run: string): Promise<number> {
  const events: SseEvent[] = [];
  for await (const item of readSse(await fetch(`${f.loopd.url}/conversations/${conv}/runs/${run}/events`)))
    if (isEvent(item)) events.push(item);
  return events.at(-1)!.id;
}

describe("a conversation's approvals and client tools are checked", () => {
  const create = (body: unknown) => post("/conversations", body);

  test("unknown tools to approve, clashing or malformed client tools are 400s naming them", async () => {
    const before = await rowCounts(f.database);
    const unknown = await create({ approval_required: ["calculate", "launch_rockets"] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: "invalid_request", details: { unknown: ["launch_rockets"] } });
    const notAllowed = await create({ tools: ["calculate"], approval_required: ["delete_note"] });
    expect(notAllowed.json().error.details.unknown).toEqual(["delete_note"]);
    const clash = await create({ client_tools: [{ ...INVOICE_TOOL, name: "calculate" }] });
    expect(clash.statusCode).toBe(400);
    expect(clash.json().error.details.clashing).toEqual(["calculate"]);
    const twice = await create({ tools: [], client_tools: [INVOICE_TOOL, INVOICE_TOOL] });
    expect(twice.json().error.details.clashing).toEqual(["create_invoice"]);
    for (const input_schema of [{ type: "string" }, { properties: {} }, { type: "object", properties: [] }, "object"]) {
      const bad = await create({ client_tools: [{ ...INVOICE_TOOL, input_schema }] });
      expect(bad.statusCode, JSON.stringify(input_schema)).toBe(400);
      expect(bad.json().error.message).toContain("input_schema");
    }
    const badName = await create({ client_tools: [{ ...INVOICE_TOOL, name: "create invoice!" }] });
    expect(badName.statusCode).toBe(400);
    expect((await create({ action_timeout_s: 0 })).statusCode).toBe(400);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("PATCH checks the settings as they will stand together", async () => {
    const conv = await client().createConversation({
      approval_required: ["delete_note"],
      client_tools: [INVOICE_TOOL],
      action_timeout_s: 60,
    });
    expect(conv).toMatchObject({
      approval_required: ["delete_note"],
      client_tools: [{ ...INVOICE_TOOL }],
      action_timeout_s: 60,
    });
    const patch = (body: unknown) =>
      f.loopd.app.inject({ method: "PATCH", url: `/conversations/${conv.id}`, payload: body as object });
    // Dropping the tool that needs approval while it is still listed: refused.
    expect((await patch({ tools: ["calculate"] })).statusCode).toBe(400);
    const ok = await patch({ tools: ["calculate"], approval_required: [], action_timeout_s: null });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      tools: ["calculate"],
      approval_required: [],
      client_tools: [INVOICE_TOOL],
      action_timeout_s: null,
    });
    expect((await patch({ tools: ["calculate", "create_invoice"] })).statusCode).toBe(400);
  });
});
