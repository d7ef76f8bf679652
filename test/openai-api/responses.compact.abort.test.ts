/**
 * `POST /v1/responses/compact` left by its client while the model hangs:
 * the summary call stops and is recorded failed, the tenant's compactions
 * in flight count it no more, and loopd still stops promptly (the spare
 * connection the client's fetch opens on an abort, never used, held
 * `close()` for over a minute).
 */
import { connect } from "node:net";
import OpenAI, { BadRequestError } from "openai";
import { describe, expect, test, vi } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({
  listen: true,
  env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true", MAX_ACTIVE_RUNS_PER_TENANT: "1" },
});

const keys: Record<string, string> = {};
const keyOf = async (tenant: string) =>
  (keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key);
const clientOf = async (tenant = "acme") =>
  new OpenAI({ apiKey: await keyOf(tenant), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
const openaiModel = () => `openai/${f.loopd.services.providers.openai.defaultModel}`;
/** The next model call hangs; resolves once it is asked. */
const hangNext = () =>
  new Promise<void>((resolve) => {
    f.llm.respond = () => {
      resolve();
      return { hang: true };
    };
  });
/** The tenant's latest run (compactions are runs of conversations of their own). */
const latestRun = async (tenant: string) => {
  const { store } = f.loopd.services;
  const [conversation] = (await store.conversations.list(tenant, { limit: 1 })).rows;
  return conversation ? (await store.runs.list({ conversationId: conversation.id, limit: 1 })).rows[0] : undefined;
};

describe("a compaction its client leaves", () => {
  test("the summary call stops and is recorded failed; loopd stops promptly", async () => {
    const client = await clientOf("leaver");
    // 400s first, two at once: with other connections in its pool, the client keeps the spare one it opens on
    // the abort, never used (with one alone it dropped it after about 4 s), as after the 400 tests of compact's file.
    for (const err of await Promise.all(
      [1, 2].map(() => client.responses.compact({ model: "mock/mock-1" }).catch((e: unknown) => e)),
    ))
      expect(err).toBeInstanceOf(BadRequestError);
    const asked = hangNext();
    const gone = new AbortController();
    const compacting = client.responses
      .compact({ model: openaiModel(), input: "Hello." }, { signal: gone.signal })
      .catch((e: unknown) => e);
    await asked;
    gone.abort();
    expect(await compacting).toBeInstanceOf(OpenAI.APIUserAbortError);
    await vi.waitFor(async () => expect(await latestRun("leaver")).toMatchObject({ status: "failed", steps: 0 }));
    await f.restart(); // hung past the test's timeout before the spare connections were dropped
  });

  test("a second compaction of the tenant while one is in flight: 429, another tenant's goes ahead", async () => {
    const client = await clientOf("busy");
    const asked = hangNext();
    const gone = new AbortController();
    const first = client.responses
      .compact({ model: openaiModel(), input: "First." }, { signal: gone.signal })
      .catch((e: unknown) => e);
    await asked;
    const err = await client.responses.compact({ model: openaiModel(), input: "Second." }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toContain("MAX_ACTIVE_RUNS_PER_TENANT (1)");
    f.llm.respond = null;
    f.llm.script({ text: "SUMMARY: other." });
    const other = await (await clientOf("other")).responses.compact({ model: openaiModel(), input: "Other." });
    expect(other.object).toBe("response.compaction");
    gone.abort();
    expect(await first).toBeInstanceOf(OpenAI.APIUserAbortError);
    // The compaction left holds its slot no more.
    f.llm.script({ text: "SUMMARY: second." });
    await vi.waitFor(async () => expect(await latestRun("busy")).toMatchObject({ status: "failed" }));
    const again = await client.responses.compact({ model: openaiModel(), input: "Second." });
    expect(again.object).toBe("response.compaction");
  });

  test("a connection that never sent a request does not hold loopd's stopping", async () => {
    const { port } = new URL(f.loopd.url);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => {}); // loopd resets it: what counts is that it ends
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    const dropped = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await f.restart(); // waited on the silent connection until Node's request timeouts ended it
    await dropped;
  });
});
