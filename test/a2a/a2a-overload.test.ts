/**
 * Load shedding over A2A: while the process is overloaded, a message that
 * would start a run is refused as the HTTP routes refuse one (503,
 * Retry-After, the contract's shape, nothing saved); the caller's answer to a
 * task waiting for an approval is served, as the actions route is.
 */
import type { InjectOptions } from "fastify";
import { expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { lagEventLoop, until } from "../support/helpers/lag-event-loop.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const MAX_LAG_MS = 300;
const f = useLoopd({ tools: testTools(), env: { MAX_EVENT_LOOP_DELAY_MS: String(MAX_LAG_MS) }, pressureSampleMs: 100 });
const inject = (options: InjectOptions) => f.loopd.app.inject(options);
const state = () => f.loopd.services.overload.state;

const send = (agent: string, parts: object[], contextId?: string, method = "SendMessage") =>
  inject({
    method: "POST",
    url: `/a2a/${agent}`,
    payload: {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts, ...(contextId && { contextId }) },
      },
    },
  });

test("overloaded: a message that starts a task gets 503 with Retry-After (streaming too, in a context too); the answer to a waiting task is served", async () => {
  await until(() => state() === "normal", { timeoutMs: 30_000, what: "the guard's arming" });
  const paused: Record<string, { contextId: string; taskId: string }> = {};
  for (const provider of ["anthropic", "openai"]) {
    const name = `gated-${provider}`;
    const made = await inject({
      method: "POST",
      url: "/agents",
      payload: { name, system: "You help.", provider, tools: ["calculate"], approval_required: ["calculate"] },
    });
    expect(made.statusCode).toBe(201);
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
    const res = await send(name, [{ text: "Compute 6*7" }]);
    const task = res.json().result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    paused[provider] = { contextId: task.contextId, taskId: task.id };
  }
  const lag = lagEventLoop({ busyMs: 2 * MAX_LAG_MS });
  try {
    await until(() => state() === "overloaded", { what: "overload" });
    const before = await rowCounts(f.database);
    const refused = await Promise.all([
      send("gated-anthropic", [{ text: "a new task" }]),
      send("gated-openai", [{ text: "a new task" }], undefined, "SendStreamingMessage"),
      inject({
        method: "POST",
        url: "/a2a/gated-anthropic",
        payload: {
          jsonrpc: "2.0",
          id: 1,
          method: "message/send",
          params: {
            message: { kind: "message", messageId: "m03", role: "user", parts: [{ kind: "text", text: "new" }] },
          },
        },
      }),
    ]);
    for (const res of refused) {
      expect(expectError(res, 503, "unavailable").details).toEqual({ reason: "overloaded" });
      expect(res.headers["retry-after"]).toBe("5");
    }
    expect(await rowCounts(f.database)).toEqual(before);

    for (const provider of ["anthropic", "openai"]) {
      f.llm.script({ text: "42." });
      const answered = await send(`gated-${provider}`, [{ data: { approve: true } }], paused[provider]!.contextId);
      expect(answered.statusCode).toBe(200);
      expect(answered.json().result.task).toMatchObject({
        id: paused[provider]!.taskId,
        status: { state: "TASK_STATE_COMPLETED" },
      });
      // The context's next task is a new run: refused.
      const next = await send(`gated-${provider}`, [{ text: "again" }], paused[provider]!.contextId);
      expect(expectError(next, 503, "unavailable").details).toEqual({ reason: "overloaded" });
    }
  } finally {
    await lag.stop();
  }
}, 90_000);
