/**
 * What two instances on one database, a delete
 * racing an answer, and the trace's two forms did to a conversation. Each
 * test failed before its fix.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { answerAction } from "../../src/conversations/answer-action.js";
import { api } from "../support/helpers/api.js";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { deleteNoteTool, effects } from "../support/helpers/action-tools.js";
import { testTools } from "../support/helpers/test-tools.js";

const tools = () => [...testTools(), deleteNoteTool()];
const f = useLoopd({ tools: tools(), listen: true, instanceId: "instance-a" });
let b: TestLoopd;
let bDatabase: typeof f.database;
beforeAll(async () => {
  // Another instance on the same database: a pool of its own on Postgres; the same database object embedded (one process).
  bDatabase = f.testDb.kind === "postgres" ? await f.testDb.open() : f.database;
  b = await startLoopd({ database: bDatabase, llm: f.llm, tools: tools(), instanceId: "instance-b" });
});
afterAll(async () => {
  await b?.close();
  if (bDatabase !== f.database) await bDatabase?.close();
});

test("a run paused on A, answered on B and refused there: A's next run sends a valid history, not a stale one", async () => {
  effects.length = 0;
  const a = api(f.loopd.app);
  const conv = await a.createConversation({ provider: "anthropic", approval_required: ["delete_note"] });
  f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "t" } }] });
  const paused = (await a.send(conv.id, { content: "Delete t." })).json();
  expect(paused.run.status).toBe("requires_action");

  // B runs the approved call, and the model refuses to go on: the turn's messages are marked excluded.
  f.llm.script({ text: "I can't continue with that.", stop: "refusal" });
  const answered = await b.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.run.id}/actions`,
    payload: { approvals: [{ tool_call_id: paused.run.required_action.tool_calls[0].tool_call_id, approve: true }] },
  });
  expect(answered.json().run).toMatchObject({ status: "incomplete", stop_reason: "refusal" });

  // Back on A: the fake model, like the real APIs, refuses a call without its result (a 400, the run failed).
  f.llm.script({ text: "Hello again." }, { text: "And again." });
  for (const content of ["Hi.", "Still there?"]) {
    const next = (await a.send(conv.id, { content })).json();
    expect(next.run).toMatchObject({ status: "completed", error: null });
  }
});

test("an answer racing a DELETE of its conversation: 404, never 409 with a null status", async () => {
  const a = api(f.loopd.app);
  for (let i = 0; i < 30; i++) {
    const conv = await a.createConversation({ provider: "openai", approval_required: ["delete_note"] });
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: `n${i}` } }] }, { text: "Done." });
    const paused = (await a.send(conv.id, { content: "Delete." })).json();
    const [answer] = await Promise.all([
      f.loopd.app.inject({
        method: "POST",
        url: `/conversations/${conv.id}/runs/${paused.run.id}/actions`,
        payload: {
          approvals: [{ tool_call_id: paused.run.required_action.tool_calls[0].tool_call_id, approve: true }],
        },
      }),
      f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` }),
    ]);
    f.llm.reset();
    // Either the answer came first (200) or the delete did (404): nothing else.
    expect([200, 404], answer.body).toContain(answer.statusCode);
    if (answer.statusCode === 404) expect(answer.json().error.code).toBe("not_found");
  }
});

test("an answer whose conversation is deleted between the answer's first read and its lock: 404", async () => {
  const a = api(f.loopd.app);
  const conv = await a.createConversation({ provider: "openai", approval_required: ["delete_note"] });
  f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "gone" } }] });
  const paused = (await a.send(conv.id, { content: "Delete." })).json().run;
  const { services, runs: manager } = f.loopd;
  // The DELETE lands right after the answer has read the run, at the instant the race needs.
  let deleted = false;
  const runsOfStore = {
    ...services.store.runs,
    getOfTenant: async (tenant: string, id: string) => {
      const row = await services.store.runs.getOfTenant(tenant, id);
      if (!deleted) {
        deleted = true;
        expect((await f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` })).statusCode).toBe(204);
      }
      return row;
    },
  };
  const answering = answerAction(
    { services: { ...services, store: { ...services.store, runs: runsOfStore } }, runs: manager },
    {
      tenant: "default",
      conversationId: conv.id,
      runId: paused.id,
      approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }],
      toolOutputs: [],
    },
  );
  await expect(answering).rejects.toMatchObject({ code: "not_found" });
  expect(deleted).toBe(true);
});

test("the trace's JSON and NDJSON forms are one presentation: the same spans, run.end's cost included", async () => {
  const a = api(f.loopd.app);
  const conv = await a.createConversation({ provider: "openai", model: "gpt-4o-mini" });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "4." });
  const run = (await a.send(conv.id, { content: "2+2?" })).json().run;
  const url = `/conversations/${conv.id}/runs/${run.id}/trace`;
  const json = (await f.loopd.app.inject({ method: "GET", url })).json();
  const lines = (await f.loopd.app.inject({ method: "GET", url, headers: { accept: "application/x-ndjson" } })).body
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines[0]).toEqual({ type: "run", run: json.run });
  expect(lines.slice(1)).toEqual(json.spans);
  expect(json.spans.at(-1)).toMatchObject({ type: "run.end", usage: { cost_usd: expect.any(Number) } });
});
