import type { InjectOptions } from "fastify";
import { expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { expectError } from "../support/helpers/expect-error.js";
import { blockEventLoop, lagEventLoop, until } from "../support/helpers/lag-event-loop.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const SAMPLE_MS = 100;
/** Well above what a machine busy with other test files makes of this process's own work; `lagEventLoop` makes more. */
const MAX_LAG_MS = 300;
const f = useLoopd({ env: { MAX_EVENT_LOOP_DELAY_MS: String(MAX_LAG_MS) }, pressureSampleMs: SAMPLE_MS });
const client = () => api(f.loopd.app);
const inject = (options: InjectOptions) => f.loopd.app.inject(options);
const state = () => f.loopd.services.overload.state;

/** The guard arms once the loop has been healthy for a few samples after the start (a machine busy with other test files may delay it). */
const armed = () => until(() => state() === "normal", { timeoutMs: 30_000, what: "the guard's arming" });

/** A run paused on an approval, made while the process is not overloaded. */
async function pausedRun() {
  const conv = await client().createConversation({ provider: "anthropic", approval_required: ["calculate"] });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
  const res = await client().send(conv.id, { content: "Compute" });
  expect(res.statusCode, res.body).toBe(200);
  const { run } = res.json();
  expect(run.status).toBe("requires_action");
  return { conv, run };
}

test("overloaded, sustained: only new runs are refused (503, Retry-After, nothing saved); /healthz, reads, new conversations, answers and cancels are served; it recovers", async () => {
  await armed();
  const answered = await pausedRun();
  const cancelled = await pausedRun();
  const lag = lagEventLoop({ busyMs: 2 * MAX_LAG_MS });
  try {
    await until(() => state() === "overloaded", { what: "overload" });
    const before = await rowCounts(f.database);
    const [health, ready, list, messages, send, chat] = await Promise.all([
      inject({ method: "GET", url: "/healthz" }),
      inject({ method: "GET", url: "/readyz" }),
      inject({ method: "GET", url: "/conversations" }),
      inject({ method: "GET", url: `/conversations/${answered.conv.id}/messages` }),
      inject({ method: "POST", url: `/conversations/${answered.conv.id}/messages`, payload: { content: "a new run" } }),
      inject({
        method: "POST",
        url: "/ui/chat",
        payload: {
          id: answered.conv.id,
          messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "a new run" }] }],
          trigger: "submit-message",
        },
      }),
    ]);
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: "ok" });
    expect(list.statusCode).toBe(200);
    expect(messages.statusCode).toBe(200);
    for (const res of [ready, send, chat]) {
      expect(expectError(res, 503, "unavailable").details).toEqual({ reason: "overloaded" });
      expect(res.headers["retry-after"]).toBe("5");
    }
    expect(send.json().error.message).toMatch(/overloaded: new runs are refused/);
    expect(await rowCounts(f.database)).toEqual(before);

    // Not a run: served.
    expect(
      (await inject({ method: "POST", url: "/conversations", payload: { title: "while overloaded" } })).statusCode,
    ).toBe(201);
    // A run already accepted goes on: its answer and its cancel are served.
    f.llm.script({ text: "42." });
    const [call] = answered.run.required_action.tool_calls;
    const answer = await inject({
      method: "POST",
      url: `/conversations/${answered.conv.id}/runs/${answered.run.id}/actions`,
      payload: { approvals: [{ tool_call_id: call.tool_call_id, approve: true }] },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().run).toMatchObject({ status: "completed" });
    const cancel = await inject({
      method: "POST",
      url: `/conversations/${cancelled.conv.id}/runs/${cancelled.run.id}/cancel`,
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json()).toMatchObject({ status: "cancelled" });
    expect(state()).toBe("overloaded");
  } finally {
    await lag.stop();
  }

  // Healthy samples in a row end it; new runs are taken again.
  await until(() => state() === "normal", { what: "recovery" });
  expect((await inject({ method: "GET", url: "/readyz" })).json()).toEqual({ status: "ready" });
  f.llm.script({ text: "Back." });
  expect((await client().send(answered.conv.id, { content: "And now?" })).json().run).toMatchObject({
    status: "completed",
  });
  // A bound, not a measure: arming alone may take up to 30 s on a machine busy with other test files.
}, 90_000);

test("one slow moment, however long, is one sample: new runs are still taken", async () => {
  await armed();
  const conv = await client().createConversation({ provider: "openai" });
  blockEventLoop(10 * SAMPLE_MS);
  // The guard's sample of that stretch is taken before this timer fires: its own was due first.
  await new Promise((resolve) => setTimeout(resolve, 1));
  f.llm.script({ text: "Taken." });
  const res = await client().send(conv.id, { content: "right after a long synchronous stretch" });
  expect(res.statusCode).toBe(200);
  expect(res.json().run).toMatchObject({ status: "completed" });
  expect(state()).toBe("normal");
});
