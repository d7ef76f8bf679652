/**
 * A response refused after `POST /v1/responses` made a conversation for it
 * (a new one, stored; or a fork, continuing from a response that is not its
 * conversation's latest): the client gets the error, and what the request
 * made is gone — nothing is left behind empty (review: with `store: true`
 * only the `store: false` copies were removed).
 */
import OpenAI from "openai";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MAX_ACTIVE_RUNS_PER_TENANT: "1" } });

const clientOf = async (tenant: string) =>
  new OpenAI({
    apiKey: (await f.loopd.services.store.keys.create({ tenant, name: null })).key,
    baseURL: `${f.loopd.url}/v1`,
    maxRetries: 0,
  });
const model = () => `openai/${f.loopd.services.providers.openai.defaultModel}`;
const conversationIds = async (tenant: string) =>
  (await f.loopd.services.store.conversations.list(tenant, { limit: 100 })).rows.map((c) => c.id).sort();

describe("a refused response", () => {
  test("leaves neither the conversation it made nor the fork it made", async () => {
    const tenant = "capped";
    const client = await clientOf(tenant);
    f.llm.script({ text: "One." }, { text: "Two." });
    const first = await client.responses.create({ model: model(), input: "First." });
    await client.responses.create({ model: model(), input: "Second.", previous_response_id: first.id });

    // The tenant's one active run: a background response whose model call hangs.
    let asked!: () => void;
    const hanging = new Promise<void>((resolve) => (asked = resolve));
    f.llm.respond = () => {
      asked();
      return { hang: true };
    };
    const held = await client.responses.create({ model: model(), input: "Hold.", background: true });
    await hanging;
    const before = await conversationIds(tenant);

    const fresh = await client.responses.create({ model: model(), input: "New." }).catch((e: unknown) => e);
    expect(fresh).toBeInstanceOf(OpenAI.RateLimitError);
    // `first` is not its conversation's latest response: continuing from it forks.
    const fork = await client.responses
      .create({ model: model(), input: "Again.", previous_response_id: first.id })
      .catch((e: unknown) => e);
    expect(fork).toBeInstanceOf(OpenAI.RateLimitError);
    expect(await conversationIds(tenant)).toEqual(before);

    await client.responses.cancel(held.id);
    f.llm.respond = null;
  });
});
