/**
 * Pauses under races, crash points and odd input: an answer after expires_at, a
 * cancel while the step pauses, a stop between answer and call, client tools.
 * Each test of the first group failed before its fix.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { followRunEvents } from "../../src/runs/follow-run-events.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { api } from "../support/helpers/api.js";
import { collectEvents } from "../support/helpers/sse-client.js";
import { deleteNoteTool, effects, INVOICE_TOOL } from "../support/helpers/action-tools.js";
import { useLoopd, type LoopdFixture } from "../support/helpers/use-loopd.js";
import { toolResultsIn } from "../support/helpers/wire.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const tools = () => [
  ...createBuiltinTools(),
  deleteNoteTool(),
  defineTool({
    name: "slow_delete",
    description: "Deletes slowly; always needs approval.",
    input: z.object({ title: z.string() }),
    needsApproval: true,
    execute: async ({ title }) => {
      await sleep(1_500);
      effects.push(`slowly deleted ${title}`);
      return `note ${title} deleted slowly`;
    },
  }),
  defineTool({
    name: "picky",
    description: "Its approval rule throws on some inputs.",
    input: z.object({ n: z.number() }),
    needsApproval: ({ n }) => {
      if (n < 0) throw new Error("rule bug");
      return n > 10;
    },
    execute: ({ n }) => `picked ${n}`,
  }),
];

function helpers(f: LoopdFixture) {
  const client = () => api(f.loopd.app);
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    f.loopd.app.inject({ method: "POST", url, payload: payload as object, headers });
  const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();
  const answer = (conv: string, run: string, body: unknown, headers: Record<string, string> = {}) =>
    post(`/conversations/${conv}/runs/${run}/actions`, body, headers);
  const sql = (text: string, values: unknown[] = []) =>
    f.database.query({ name: `review_${text.length}_${values.length}`, text, values });
  return { client, post, get, answer, sql };
}

// Sweeps (lease takeover and expiry) about every second.
const f = useLoopd({ listen: true, env: { RUN_LEASE_MS: "4000" }, tools: tools() });
const { client, post, get, answer, sql } = helpers(f);

const newConversation = (provider: "anthropic" | "openai", extra: Record<string, unknown> = {}) =>
  client().createConversation({ provider, approval_required: ["delete_note"], client_tools: [INVOICE_TOOL], ...extra });

async function pausedOn(
  provider: "anthropic" | "openai",
  calls: { name: string; input: Record<string, unknown> }[],
  extra: Record<string, unknown> = {},
  send: Record<string, unknown> = {},
) {
  const conv = await newConversation(provider, extra);
  f.llm.script({ text: "On it.", toolCalls: calls });
  const res = await client().send(conv.id, { content: "Go", ...send });
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body.run.status).toBe("requires_action");
  return { conv, run: body.run, body };
}

describe("found in review: pauses under races, crashes and odd input", () => {
  test("an answer after expires_at, before the sweeper's next pass, is refused (409) and the approved call never runs", async () => {
    effects.length = 0;
    const { conv, run } = await pausedOn("openai", [{ name: "delete_note", input: { title: "late" } }]);
    // The deadline passes; the sweeper has not come round yet (it runs about once a second).
    await sql(
      "update runs set action_expires_at = now() - interval '1 minute', required_action = jsonb_set(required_action, '{expires_at}', to_jsonb(now() - interval '1 minute')) where id = $1",
      [run.id],
    );
    f.llm.script({ text: "Deleted." });
    const res = await answer(conv.id, run.id, {
      approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
    });
    // The run told the client its calls are given up at expires_at: a later answer must not execute them.
    expect(res.statusCode).toBe(409);
    expect(effects).toEqual([]);
  });

  test("a cancel that lands while the step is pausing ends the pause cancelled; no stale flag stops a later run", async () => {
    effects.length = 0;
    const conv = await newConversation("anthropic", { approval_required: [] });
    const repo = f.loopd.services.store.runs;
    const save = repo.save;
    let cancel: Promise<{ statusCode: number; json(): any }> | undefined;
    // Deterministic stand-in for the race: the cancel request arrives while the pause is being written
    // (after the loop's last abort check), e.g. from another instance.
    repo.save = async (step) => {
      if (step.end?.status === "requires_action" && !cancel) {
        cancel = post(`/conversations/${conv.id}/runs/${step.runId}/cancel`, {});
        for (let i = 0; i < 100 && !(await repo.get(step.runId))?.cancelRequested; i++) await sleep(10);
      }
      return save.call(repo, step);
    };
    let runId: string;
    try {
      f.llm.script({ toolCalls: [{ name: "slow_delete", input: { title: "x" } }] });
      const sent = (await client().send(conv.id, { content: "Delete x" })).json();
      runId = sent.run.id;
    } finally {
      repo.save = save;
    }
    const cancelled = await cancel!;
    // The client asked to cancel and got 200: the run must end cancelled, not stay paused.
    expect(cancelled.json().status).toBe("cancelled");

    const run = await get(`/conversations/${conv.id}/runs/${runId}`);
    if (run.status !== "requires_action") return;
    expect((await repo.get(runId))!.cancelRequested).toBe(false);
    // Answered: the stale cancel flag is read at the next lease renewal and stops the run mid-call.
    f.llm.script({ text: "Deleted x." });
    const done = (
      await answer(conv.id, runId, {
        approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
      })
    ).json();
    expect(done.run.status).toBe("completed");
  });

  test("the process stops between the answer's commit and the approved call: the run taken over runs the approved call", async () => {
    effects.length = 0;
    const { conv, run } = await pausedOn("openai", [{ name: "delete_note", input: { title: "crash" } }]);
    const runs = f.loopd.runs;
    const start = runs.start;
    // As if the process died right after the answer committed (or was shutting down): the run is not launched here.
    runs.start = () => {};
    let res;
    try {
      f.llm.script({ text: "Done." });
      res = answer(conv.id, run.id, {
        approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
      });
      await sleep(100);
    } finally {
      runs.start = start;
    }
    // The lease lapses (4 s) and the sweeper recovers the run.
    const done = (await res).json();
    expect(done.run.status).toBe("completed");
    const result = (await client().history(conv.id)).find((m: any) => m.role === "tool")!.content[0];
    // It never started (no tool_call.started was saved, and one is saved before an approved call runs): it runs now.
    expect(result.content).not.toContain("may or may not have taken effect");
    expect(effects.filter((e) => e.includes("crash"))).toEqual(["deleted crash"]);
  }, 20_000);

  test("a reader from the start ends at a pause that is the last row of a full batch", async () => {
    const { conv, run } = await pausedOn("anthropic", [{ name: "create_invoice", input: { customer: "ACME" } }]);
    const rows = await f.loopd.services.store.events.after({ runId: run.id, afterSeq: 0, limit: 1000 });
    expect(rows.at(-1)!.type).toBe("run.requires_action");
    const started = Date.now();
    const seen: string[] = [];
    const follow = followRunEvents(f.loopd.services, {
      runId: run.id,
      conversationId: conv.id,
      after: 0,
      batchSize: rows.length,
      signal: AbortSignal.timeout(3_000),
    });
    for await (const batch of follow) seen.push(...batch.map((r) => r.type));
    expect(seen.at(-1)).toBe("run.requires_action");
    // It ends right after the pause, as with any other batch size, instead of waiting for the answer.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test("tool_choice may name a client tool", async () => {
    const conv = await newConversation("anthropic");
    f.llm.script({ toolCalls: [{ name: "create_invoice", input: { customer: "ACME" } }] });
    const res = await client().send(conv.id, { content: "Bill ACME", tool_choice: { name: "create_invoice" } });
    expect(res.statusCode).toBe(200);
  });

  test("a client call whose arguments are not JSON is answered with an error, not handed to the client", async () => {
    const conv = await newConversation("openai");
    f.llm.script({ toolCalls: [{ name: "create_invoice", rawArguments: '{"customer": "AC' }] });
    f.llm.script({ text: "Let me retry." });
    const { run } = (await client().send(conv.id, { content: "Bill ACME" })).json();
    // The server tools' rule ("a call the executor would refuse anyway runs, and the model reads the error")
    // is skipped for client tools: the client is asked to act on arguments the model never sent.
    expect(run.required_action?.tool_calls?.[0]?.input).not.toEqual({});
  });
});

test("a needsApproval rule that throws asks for approval instead of failing the run", async () => {
  const conv = await newConversation("anthropic");
  f.llm.script({ toolCalls: [{ name: "picky", input: { n: -1 } }] });
  const { run } = (await client().send(conv.id, { content: "pick" })).json();
  expect(run.status).toBe("requires_action");
});

describe("checks that held", () => {
  test.each(["anthropic", "openai"] as const)(
    "%s: repeated pauses in one run, a text+calls pause step, all-client steps; valid histories; one gap-free log read through both pauses",
    async (provider) => {
      const { conv, run } = await pausedOn(provider, [
        { name: "create_invoice", input: { customer: "A" } },
        { name: "calculate", input: { expression: "1+1" } },
        { name: "create_invoice", input: { customer: "B" } },
      ]);
      const [a, b] = run.required_action.tool_calls;
      f.llm.script({
        text: "And delete?",
        toolCalls: [
          { name: "delete_note", input: { title: "n" } },
          { name: "create_invoice", input: { customer: "C" } },
        ],
      });
      const second = (
        await answer(conv.id, run.id, {
          tool_outputs: [
            { tool_call_id: b.tool_call_id, output: "INV-B" },
            { tool_call_id: a.tool_call_id, output: "INV-A" },
          ],
        })
      ).json();
      expect(second.run).toMatchObject({ id: run.id, status: "requires_action", steps: 2 });
      // A reader past the first pause while the second one waits: waits, then reads on after the answer.
      const ev1 = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`));
      expect(ev1.at(-1)!.event).toBe("run.requires_action");
      const tailing = fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`, {
        headers: { "last-event-id": String(ev1.at(-1)!.id) },
      }).then(collectEvents);
      await sleep(200);
      const [d, c] = second.run.required_action.tool_calls;
      f.llm.script({ text: "All done." });
      const done = (
        await answer(conv.id, run.id, {
          approvals: [{ tool_call_id: d.tool_call_id, approve: false }],
          tool_outputs: [{ tool_call_id: c.tool_call_id, output: "INV-C" }],
        })
      ).json();
      expect(done.run).toMatchObject({ status: "completed", steps: 3 });
      const tail = await tailing;
      expect(tail[0]!.id).toBe(ev1.at(-1)!.id + 1);
      expect(tail.at(-1)!.event).toBe("run.completed");
      const all = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`));
      expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
      expect(all.filter((e) => e.event.startsWith("run.")).map((e) => e.event)).toEqual([
        "run.created",
        "run.requires_action",
        "run.action_answered",
        "run.requires_action",
        "run.action_answered",
        "run.completed",
      ]);
      // Every model request was accepted by the fake's history validator; the last one has the results in call order.
      const last = f.llm.requests.at(-1)!;
      expect(
        toolResultsIn(last)
          .slice(-2)
          .map((r) => r.id),
      ).toEqual([d.tool_call_id, c.tool_call_id]);
      for (const fmt of ["anthropic", "openai"])
        expect(
          (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=${fmt}` }))
            .statusCode,
        ).toBe(200);
    },
  );

  test("max_steps reached right after an answer: approved call runs, run ends incomplete/max_steps, next message is valid", async () => {
    effects.length = 0;
    const { conv, run } = await pausedOn(
      "anthropic",
      [{ name: "delete_note", input: { title: "m" } }],
      {},
      { max_steps: 1 },
    );
    const done = (
      await answer(conv.id, run.id, {
        approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
      })
    ).json();
    expect(done.run).toMatchObject({ status: "incomplete", stop_reason: "max_steps", steps: 1 });
    expect(effects).toEqual(["deleted m"]);
    f.llm.script({ text: "ok" });
    expect((await client().send(conv.id, { content: "next" })).json().run.status).toBe("completed");
  });

  test("PATCH while waiting: dropping the approved tool and the client tool; answer still accepted, history stays valid", async () => {
    const { conv, run } = await pausedOn("openai", [
      { name: "delete_note", input: { title: "p" } },
      { name: "create_invoice", input: { customer: "P" } },
    ]);
    const patched = await f.loopd.app.inject({
      method: "PATCH",
      url: `/conversations/${conv.id}`,
      payload: { tools: ["calculate"], approval_required: [], client_tools: [] },
    });
    expect(patched.statusCode).toBe(200);
    const [del, inv] = run.required_action.tool_calls;
    f.llm.script({ text: "ok" });
    const done = (
      await answer(conv.id, run.id, {
        approvals: [{ tool_call_id: del.tool_call_id, approve: true }],
        tool_outputs: [{ tool_call_id: inv.tool_call_id, output: "INV" }],
      })
    ).json();
    expect(done.run.status).toBe("completed");
    const results = toolResultsIn(f.llm.requests.at(-1)!);
    expect(results.map((r) => r.id)).toEqual([del.tool_call_id, inv.tool_call_id]);
  });

  test("a huge client output is clipped; NUL in output/reason/actor is a 400 that changes nothing; unknown fields are 400", async () => {
    const { conv, run } = await pausedOn("anthropic", [{ name: "create_invoice", input: { customer: "H" } }]);
    const id = run.required_action.tool_calls[0].tool_call_id;
    for (const body of [
      { tool_outputs: [{ tool_call_id: id, output: "a\u0000b" }] },
      { tool_outputs: [{ tool_call_id: id, output: "ok" }], actor: "x\u0000" },
      { tool_outputs: [{ tool_call_id: id, output: "ok", extra: 1 }] },
      {
        tool_outputs: [{ tool_call_id: id, output: "ok" }],
        approvals: [{ tool_call_id: id, approve: true, reason: "\ud800" }],
      },
    ]) {
      const res = await answer(conv.id, run.id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await get(`/conversations/${conv.id}/runs/${run.id}`)).status).toBe("requires_action");
    f.llm.script({ text: "ok" });
    const done = (
      await answer(conv.id, run.id, { tool_outputs: [{ tool_call_id: id, output: "x".repeat(900_000) }] })
    ).json();
    expect(done.run.status).toBe("completed");
    expect(done.messages[0].content[0].content.length).toBeLessThanOrEqual(16_384);
  });

  test("answer vs new message vs cancel vs DELETE at once: exactly one wins, the history is valid, nothing hangs", async () => {
    // Rounds 2-7 delete the conversation too (a paused run's lock order against the delete's once deadlocked into a 500).
    for (let round = 0; round < 8; round++) {
      f.llm.reset();
      const { conv, run } = await pausedOn(round % 2 ? "openai" : "anthropic", [
        { name: "create_invoice", input: { customer: "R" } },
      ]);
      const id = run.required_action.tool_calls[0].tool_call_id;
      f.llm.script({ text: "a" }, { text: "b" });
      const results = await Promise.all([
        answer(conv.id, run.id, { tool_outputs: [{ tool_call_id: id, output: "INV" }] }),
        client().send(conv.id, { content: "other" }),
        post(`/conversations/${conv.id}/runs/${run.id}/cancel`, {}),
        ...(round >= 2 ? [f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` })] : []),
      ]);
      for (const r of results) expect(r.statusCode, r.body).toBeLessThan(500);
      if (round >= 2) continue;
      const history = await client().history(conv.id);
      const answered = history.filter((m: any) => m.role === "tool" && m.content[0].tool_call_id === id);
      expect(answered).toHaveLength(1);
      await sleep(300);
      expect((await get(`/conversations/${conv.id}`)).active_run_id).toBeNull();
    }
  });

  test("a paused run is never claimed by the lease sweeper (several sweeps pass)", async () => {
    const { run } = await pausedOn("openai", [{ name: "create_invoice", input: { customer: "S" } }]);
    await sleep(2_500);
    const row = await f.loopd.services.store.runs.get(run.id);
    expect(row).toMatchObject({ status: "requires_action", leaseOwner: null, leaseExpiresAt: null });
  });

  test("Idempotency-Key replay with a stream returns the answer's events from the same place", async () => {
    const { conv, run } = await pausedOn("anthropic", [{ name: "create_invoice", input: { customer: "I" } }]);
    const id = run.required_action.tool_calls[0].tool_call_id;
    f.llm.script({ text: "ok" });
    const first = (
      await answer(
        conv.id,
        run.id,
        { tool_outputs: [{ tool_call_id: id, output: "INV" }] },
        { "idempotency-key": "k1" },
      )
    ).json();
    const replay = await collectEvents(
      await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/actions`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "k1" },
        body: JSON.stringify({ tool_outputs: [{ tool_call_id: id, output: "INV" }], stream: true }),
      }),
    );
    expect(replay[0]!.event).toBe("run.action_answered");
    expect(replay.at(-1)!.event).toBe("run.completed");
    expect(first.messages[0].content[0].content).toBe("INV");
  });
});
