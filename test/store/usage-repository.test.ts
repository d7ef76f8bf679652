/** GET /usage: a tenant's runs' recorded usage and cost, by day, provider and model; another tenant's never. */
import { beforeAll, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true" } });
const call = (key: string, method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });
let a = "";
let b = "";
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  a = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  b = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
  for (const [key, provider, turns] of [
    [a, "openai", 2],
    [a, "anthropic", 1],
    [b, "openai", 1],
  ] as const) {
    const conv = (await call(key, "POST", "/conversations", { provider })).json().id;
    for (let i = 0; i < turns; i++) {
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "4." });
      expect((await call(key, "POST", `/conversations/${conv}/messages`, { content: "2+2?" })).json().run.status).toBe(
        "completed",
      );
    }
  }
});

test("a tenant's use today, one row per provider and model, summed from its runs", async () => {
  const rows = (await call(a, "GET", "/usage")).json().data;
  expect(rows.map((r: any) => [r.day, r.provider, r.runs, r.steps])).toEqual([
    [today, "anthropic", 1, 2],
    [today, "openai", 2, 4],
  ]);
  const runs = (await f.loopd.services.store.usage.byDay("acme", { from: today, to: today })).find(
    (r) => r.provider === "openai",
  )!;
  expect(rows[1]).toEqual(runs);
  expect(rows[1].input_tokens).toBeGreaterThan(0);
  expect(rows[1].cost_usd).toBeGreaterThan(0);
  expect((await call(b, "GET", "/usage")).json().data.map((r: any) => [r.provider, r.runs])).toEqual([["openai", 1]]);
});

test("from and to are days, both included; a day without runs is no row; bad days are 400s that say why", async () => {
  expect((await call(a, "GET", `/usage?from=${today}&to=${today}`)).json().data).toHaveLength(2);
  expect((await call(a, "GET", "/usage?from=2020-01-01&to=2020-01-31")).json().data).toEqual([]);
  for (const [query, message] of [
    ["from=yesterday", /from: must be a day, YYYY-MM-DD/],
    ["from=2026-02-30", /must be a day that exists/],
    ["from=2026-03-02&to=2026-03-01", /is after to/],
    ["from=2020-01-01&to=2026-01-01", /at most 366/],
  ] as const) {
    const res = await call(a, "GET", `/usage?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
  }
});
