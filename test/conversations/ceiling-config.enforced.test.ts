/**
 * The operator's ceilings on a server reachable by many tenants (API keys
 * on): budgets clamped to `RUN_MAX_*_LIMIT`, models outside
 * `MODELS_ALLOWED` refused wherever they are named, the mock provider not
 * offered, and a summary model without a price refused under a cost budget.
 */
import { beforeAll, describe, expect, test } from "vitest";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({
  env: {
    API_KEYS_REQUIRED: "true",
    RUN_MAX_TOKENS_LIMIT: "50000",
    RUN_MAX_SECONDS_LIMIT: "120",
    MODELS_ALLOWED: "anthropic/claude-*,openai/gpt-5*,openai/my-local-*",
  },
});

let key = "";
beforeAll(async () => {
  key = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
});
const call = (method: "POST" | "PATCH" | "GET", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });
const create = async (body: object) => {
  const res = await call("POST", "/conversations", body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};

/** A refusal: a 400 naming the field, and nothing saved. */
async function expectRefused(
  send: () => Promise<{ statusCode: number; json(): any }>,
  details: Record<string, unknown>,
) {
  const before = await rowCounts(f.database);
  const res = await send();
  expect(res.statusCode).toBe(400);
  expect(res.json().error).toMatchObject({ code: "invalid_request", details });
  expect(await rowCounts(f.database)).toEqual(before);
  return res.json().error;
}

describe("RUN_MAX_TOKENS_LIMIT and RUN_MAX_SECONDS_LIMIT", () => {
  test("a run asking for more, or for no limit, gets the ceiling, and shows it", async () => {
    const conv = await create({ provider: "anthropic" });
    f.llm.script({ text: "Hi." }, { text: "Hi again." });
    const unlimited = (await call("POST", `/conversations/${conv.id}/messages`, { content: "Hello" })).json();
    expect(unlimited.run.budget).toMatchObject({ max_tokens: 50_000, max_seconds: 120 });
    const greedy = (
      await call("POST", `/conversations/${conv.id}/messages`, {
        content: "Hello",
        budget: { max_tokens: 10_000_000, max_seconds: 3600 },
      })
    ).json();
    expect(greedy.run.budget).toMatchObject({ max_tokens: 50_000, max_seconds: 120 });
  });

  test("a run asking for less keeps its own", async () => {
    const conv = await create({ provider: "openai", model: "gpt-5-mini" });
    f.llm.script({ text: "Hi." });
    const run = (
      await call("POST", `/conversations/${conv.id}/messages`, {
        content: "Hello",
        budget: { max_tokens: 9000, max_seconds: 30 },
      })
    ).json().run;
    expect(run.budget).toMatchObject({ max_tokens: 9000, max_seconds: 30 });
  });

  test("a conversation's defaults above the ceiling are kept as the ceiling, so what it shows is what its runs get", async () => {
    const conv = await create({ provider: "anthropic", budget: { max_tokens: 900_000, max_seconds: 30 } });
    expect(conv.budget).toEqual({ max_tokens: 50_000, max_seconds: 30 });
    const patched = (await call("PATCH", `/conversations/${conv.id}`, { budget: { max_seconds: 9999 } })).json();
    expect(patched.budget).toEqual({ max_seconds: 120 });
  });
});

describe("MODELS_ALLOWED", () => {
  test("a conversation's model outside it is a 400 naming body.model, on create and on change", async () => {
    const error = await expectRefused(() => call("POST", "/conversations", { provider: "openai", model: "gpt-4o" }), {
      field: "body.model",
      provider: "openai",
      model: "gpt-4o",
    });
    expect(error.message).toMatch(/openai\/gpt-4o is not allowed on this server; allowed: anthropic\/claude-\*/);
    // The provider's own default model counts as named.
    await expectRefused(() => call("POST", "/conversations", { provider: "anthropic", model: "gpt-5" }), {
      field: "body.model",
    });
    const conv = await create({ provider: "anthropic", model: "claude-haiku-4-5" });
    await expectRefused(
      () => call("PATCH", `/conversations/${conv.id}`, { model: "claude-haiku-4-5-evil", provider: "openai" }),
      { field: "body.model" },
    );
    expect((await call("GET", `/conversations/${conv.id}`)).json()).toMatchObject({
      provider: "anthropic",
      model: "claude-haiku-4-5",
    });
  });

  test("a message's model override outside it is a 400 naming body.model, and no run is made", async () => {
    const conv = await create({ provider: "openai", model: "gpt-5" });
    await expectRefused(() => call("POST", `/conversations/${conv.id}/messages`, { content: "Hi", model: "o3-pro" }), {
      field: "body.model",
      model: "o3-pro",
    });
    expect(f.llm.requests).toHaveLength(0);
  });

  test("a summary model outside it is a 400 naming body.context.summary_model", async () => {
    await expectRefused(
      () =>
        call("POST", "/conversations", {
          provider: "openai",
          model: "gpt-5",
          context: { strategy: "summarize", max_input_tokens: 1000, summary_model: "gpt-4o-mini" },
        }),
      { field: "body.context.summary_model", model: "gpt-4o-mini" },
    );
  });
});

describe("the mock provider, with API keys on and MOCK_PROVIDER unset", () => {
  test("is not offered: naming it is a 400 naming body.provider", async () => {
    const error = await expectRefused(() => call("POST", "/conversations", { provider: "mock" }), {
      field: "body.provider",
    });
    expect(error.message).toMatch(/MOCK_PROVIDER/);
    const conv = await create({ provider: "openai", model: "gpt-5" });
    await expectRefused(() => call("PATCH", `/conversations/${conv.id}`, { provider: "mock" }), {
      field: "body.provider",
    });
  });

  test("is no default either: without a model key, a conversation must name its provider", async () => {
    const error = await expectRefused(() => call("POST", "/conversations", { title: "no provider" }), {
      field: "body.provider",
    });
    expect(error.message).toMatch(/set a key or MOCK_PROVIDER=true/);
  });
});

describe("a cost budget needs a price for every model a run calls", () => {
  // The summary model is allowed, but has no price: under max_cost_usd its calls could not be counted.
  const summarize = { strategy: "summarize", max_input_tokens: 1000, summary_model: "my-local-summarizer" };

  test("a summary model without a price under a conversation's cost budget is a 400 naming it", async () => {
    const error = await expectRefused(
      () =>
        call("POST", "/conversations", {
          provider: "openai",
          model: "gpt-5-mini",
          context: summarize,
          budget: { max_cost_usd: 0.05 },
        }),
      {
        field: "body.budget.max_cost_usd",
        model_field: "body.context.summary_model",
        model: "my-local-summarizer",
      },
    );
    expect(error.message).toMatch(/^body\.context\.summary_model: model my-local-summarizer has no price/);
  });

  test("without a cost budget it is accepted; a message that brings one is a 400 naming the summary model, and no run is made", async () => {
    const conv = await create({ provider: "openai", model: "gpt-5-mini", context: summarize });
    await expectRefused(
      () => call("POST", `/conversations/${conv.id}/messages`, { content: "Hi", budget: { max_cost_usd: 0.05 } }),
      {
        field: "body.budget.max_cost_usd",
        model_field: "conversation.context.summary_model",
        model: "my-local-summarizer",
      },
    );
    expect(f.llm.requests).toHaveLength(0);
    // Adding the cost budget to the conversation is refused the same way.
    await expectRefused(() => call("PATCH", `/conversations/${conv.id}`, { budget: { max_cost_usd: 0.05 } }), {
      field: "body.budget.max_cost_usd",
      model_field: "conversation.context.summary_model",
    });
  });

  test("the run's own model without a price is a 400 naming it", async () => {
    const conv = await create({ provider: "openai", model: "my-local-model" });
    await expectRefused(
      () => call("POST", `/conversations/${conv.id}/messages`, { content: "Hi", budget: { max_cost_usd: 0.05 } }),
      {
        field: "body.budget.max_cost_usd",
        model_field: "conversation.model",
        model: "my-local-model",
      },
    );
  });
});
