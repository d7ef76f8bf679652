/** The per-tenant cap counts open runs after a paused one is superseded: a new message to its conversation at the cap starts. */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", MAX_ACTIVE_RUNS_PER_TENANT: "1", RATE_LIMIT_PER_MIN: "0" } });
const call = (key: string, method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });

test("at the cap, a new message to the conversation whose run is paused supersedes it and starts", async () => {
  const key = (await f.loopd.services.store.keys.create({ tenant: "t", name: null })).key;
  const conv = (
    await call(key, "POST", "/conversations", { provider: "openai", approval_required: ["calculate"] })
  ).json().id;
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
  expect((await call(key, "POST", `/conversations/${conv}/messages`, { content: "Add." })).json().run.status).toBe(
    "requires_action",
  );
  f.llm.script({ text: "ok" });
  const r = await call(key, "POST", `/conversations/${conv}/messages`, { content: "Never mind." });
  console.log("SUPERSEDE", r.statusCode, r.body.slice(0, 150));
  expect(r.statusCode).toBe(200);
});
