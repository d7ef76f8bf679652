/** Limits with keys on: requests per key per minute, and open runs per tenant, counted in the database. */
import { beforeAll, describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", RATE_LIMIT_PER_MIN: "12", MAX_ACTIVE_RUNS_PER_TENANT: "2" } });
const call = (key: string, method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });
const newKey = async (tenant: string) => (await f.loopd.services.store.keys.create({ tenant, name: null })).key;

describe("requests per key per minute", () => {
  test("every answer says the limit, what is left and when it resets; past it, 429 rate_limited with Retry-After; another key is not affected", async () => {
    const key = await newKey("busy");
    const answers = [];
    for (let i = 0; i < 13; i++) answers.push(await call(key, "GET", "/conversations"));
    expect(answers.slice(0, 12).map((r) => r.statusCode)).toEqual(Array(12).fill(200));
    expect(answers[0]!.headers).toMatchObject({ "x-ratelimit-limit": "12", "x-ratelimit-remaining": "11" });
    expect(Number(answers[0]!.headers["x-ratelimit-reset"])).toBeGreaterThan(0);
    expect(Number(answers[0]!.headers["x-ratelimit-reset"])).toBeLessThanOrEqual(60);
    const refused = answers[12]!;
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      error: { code: "rate_limited", message: expect.stringMatching(/more than 12 requests a minute/) },
    });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect((await call(await newKey("calm"), "GET", "/conversations")).statusCode).toBe(200);
    // Open routes are not counted.
    expect((await f.loopd.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });
});

describe("open runs per tenant", () => {
  let key = "";
  beforeAll(async () => {
    key = await newKey("capped");
  });
  test("past MAX_ACTIVE_RUNS_PER_TENANT (paused runs count), 429 too_many_runs with the count; nothing is saved; once one ends, a run starts again", async () => {
    const conversations = [];
    for (let i = 0; i < 3; i++)
      conversations.push(
        (await call(key, "POST", "/conversations", { provider: "openai", approval_required: ["calculate"] })).json()
          .id as string,
      );
    const pause = async (conv: string) => {
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
      return (await call(key, "POST", `/conversations/${conv}/messages`, { content: "Add." })).json().run;
    };
    expect((await pause(conversations[0]!)).status).toBe("requires_action");
    expect((await pause(conversations[1]!)).status).toBe("requires_action");
    f.llm.reset();
    const refused = await call(key, "POST", `/conversations/${conversations[2]}/messages`, { content: "Add." });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: "too_many_runs", details: { active_runs: 2 } } });
    expect((await call(key, "GET", `/conversations/${conversations[2]}/messages`)).json().data).toEqual([]);
    expect(f.llm.requests).toHaveLength(0);
    // Another tenant has its own count.
    const other = await newKey("free");
    const theirs = (await call(other, "POST", "/conversations", { provider: "openai" })).json().id;
    f.llm.script({ text: "Hi." });
    expect((await call(other, "POST", `/conversations/${theirs}/messages`, { content: "Hi" })).statusCode).toBe(200);
    // A paused run cancelled: there is room again.
    const runs = (await call(key, "GET", `/conversations/${conversations[0]}/runs`)).json().data;
    expect(
      (await call(key, "POST", `/conversations/${conversations[0]}/runs/${runs[0].id}/cancel`, {})).statusCode,
    ).toBe(200);
    f.llm.script({ text: "2." });
    expect(
      (await call(key, "POST", `/conversations/${conversations[2]}/messages`, { content: "Now?" })).statusCode,
    ).toBe(200);
  });
});
