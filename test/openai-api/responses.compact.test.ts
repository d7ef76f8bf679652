/**
 * `POST /v1/responses/compact` through the official `openai` client: the
 * compaction validated against the Open Responses specification, loopd's
 * summary call as the model was sent it, and a new chain that starts from
 * the compaction item, on both providers behind loopd.
 */
import OpenAI, { BadRequestError } from "openai";
import { describe, expect, test } from "vitest";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { expectSchema } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

const keys: Record<string, string> = {};
const keyOf = async (tenant: string) =>
  (keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key);
const clientOf = async (tenant = "acme") =>
  new OpenAI({ apiKey: await keyOf(tenant), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });

type Compacted = Awaited<ReturnType<OpenAI["responses"]["compact"]>>;
/** A compaction, checked against the specification's `CompactResource`; its one item. */
const itemOf = (compacted: Compacted) => {
  expectSchema("CompactResource", compacted);
  expect(compacted.object).toBe("response.compaction");
  expect(compacted.output).toHaveLength(1);
  const [item] = compacted.output;
  expect(item).toMatchObject({ type: "compaction", id: expect.stringMatching(/^cmp_/), created_by: "loopd" });
  return item as { type: "compaction"; id: string; encrypted_content: string };
};
const sent = (i: number) => JSON.stringify(f.llm.requests[i]!.body);
/** What the tenant's runs used today, input tokens as OpenAI counts them (cache reads and writes included). */
const usedToday = async (tenant: string) => {
  const res = await fetch(`${f.loopd.url}/usage`, { headers: { authorization: `Bearer ${await keyOf(tenant)}` } });
  const { data } = (await res.json()) as { data: Array<Record<string, number>> };
  return data.reduce<{ runs: number; input: number; output: number }>(
    (sum, r) => ({
      runs: sum.runs + r.runs!,
      input: sum.input + r.input_tokens! + r.cache_read_tokens! + r.cache_write_tokens!,
      output: sum.output + r.output_tokens!,
    }),
    { runs: 0, input: 0, output: 0 },
  );
};

describe.each(["anthropic", "openai"] as const)("/v1/responses/compact through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;

  test("compact: loopd's summary of the input, sealed in one compaction item; its tokens counted in /usage", async () => {
    const client = await clientOf(`usage-${provider}`);
    const before = await usedToday(`usage-${provider}`);
    f.llm.script({ text: "The user, Ada, asked for a landing page for a dog café; one was written." });
    const compacted = await client.responses.compact({
      model: model(),
      input: [
        { role: "user", content: "My name is Ada. Create a landing page for a dog petting café." },
        {
          type: "message",
          role: "assistant",
          id: "msg_001",
          status: "completed",
          content: [{ type: "output_text", text: "Here is a landing page: <html>…</html>", annotations: [] }],
        },
      ],
    });
    const item = itemOf(compacted);
    expect(compacted.id).toMatch(/^resp_/);
    // Opaque: neither the summary nor the input can be read from it (words long enough that random base64 never holds them).
    for (const words of ["dog café", "landing page"]) {
      expect(item.encrypted_content).not.toContain(words);
      expect(Buffer.from(item.encrypted_content.split(".").at(-1)!, "base64url").toString("latin1")).not.toContain(
        words,
      );
    }
    expect(item.encrypted_content).not.toContain(Buffer.from("landing page").toString("base64url").slice(0, 12));
    // One model call: loopd's summary prompt over a transcript of the input.
    expect(f.llm.requests).toHaveLength(1);
    expect(sent(0)).toContain("You condense the earlier part of a conversation");
    expect(sent(0)).toContain("My name is Ada. Create a landing page");
    expect(sent(0)).toContain("Here is a landing page");
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
    const after = await usedToday(`usage-${provider}`);
    expect(after).toEqual({
      runs: before.runs + 1,
      input: before.input + compacted.usage.input_tokens,
      output: before.output + compacted.usage.output_tokens,
    });
  });

  test("compaction into a new chain: the model sees the summary, then the new input, and so on down the chain", async () => {
    const client = await clientOf();
    f.llm.script(
      { text: "SUMMARY: the user is Ada; her favourite colour is teal." },
      { text: "Your name is Ada." },
      { text: "Teal." },
    );
    const compacted = await client.responses.compact({
      model: model(),
      input: [
        { role: "user", content: "I am Ada and I love teal. Remember it." },
        { role: "assistant", content: "I will remember." },
      ],
    });
    const item = itemOf(compacted);
    const first = await client.responses.create({
      model: model(),
      input: [...compacted.output, { role: "user", content: "What is my name?" }] as OpenAI.Responses.ResponseInput,
    });
    expectSchema("ResponseResource", first);
    expect(first.output_text).toBe("Your name is Ada.");
    const chain = sent(1);
    expect(chain).toContain("SUMMARY: the user is Ada");
    // The summary stands in for the compacted history, which is not sent again.
    expect(chain).not.toContain("I love teal");
    expect(chain).not.toContain(item.encrypted_content);
    expect(chain.indexOf("SUMMARY: the user is Ada")).toBeLessThan(chain.indexOf("What is my name?"));
    // The compaction is not the client's to read back: its input items are the new message alone.
    const items = await client.responses.inputItems.list(first.id);
    expect(JSON.stringify(items.data)).not.toContain("SUMMARY");
    const second = await client.responses.create({
      model: model(),
      input: "And my favourite colour?",
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe("Teal.");
    expect(sent(2)).toContain("SUMMARY: the user is Ada");
    expect(sent(2)).toContain("Your name is Ada.");
  });

  test("previous_response_id: the stored chain up to that response is what is compacted", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Noted, Grace." }, { text: "SUMMARY: the user is Grace." });
    const first = await client.responses.create({ model: model(), input: "My name is Grace." });
    const compacted = await client.responses.compact({ model: model(), previous_response_id: first.id });
    itemOf(compacted);
    expect(sent(1)).toContain("My name is Grace.");
    expect(sent(1)).toContain("Noted, Grace.");
    // Nothing of the chain changed: it goes on as before.
    f.llm.script({ text: "Grace." });
    await client.responses.create({ model: model(), input: "Who am I?", previous_response_id: first.id });
    expect(sent(2)).toContain("My name is Grace.");
    expect(sent(2)).not.toContain("SUMMARY");
  });
});

/** A model behind the fake server, for the tests that need one provider only. */
const openaiModel = () => `openai/${f.loopd.services.providers.openai.defaultModel}`;

describe("a compaction that is not this tenant's, or not whole: 400 naming it, nothing changed", () => {
  const compactOnce = async () => {
    f.llm.script({ text: "SUMMARY: a secret plan." });
    const compacted = await (await clientOf()).responses.compact({ model: openaiModel(), input: "The plan is X." });
    return itemOf(compacted).encrypted_content;
  };
  const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === "A" ? "B" : "A") + s.slice(at + 1);

  test.each([
    ["changed", (blob: string) => flip(blob, Math.floor(blob.length / 2)), "acme"],
    ["cut short", (blob: string) => blob.slice(0, blob.length - 10), "acme"],
    ["cut to its head", (blob: string) => blob.slice(0, 20), "acme"],
    ["garbage", () => "gAAAAABpM0Yj-not-loopd=", "acme"],
    ["another tenant's", (blob: string) => blob, "beta"],
  ])("%s", async (_, spoil, tenant) => {
    const blob = spoil(await compactOnce());
    const client = await clientOf(tenant);
    const before = await rowCounts(f.database);
    const input = [
      { role: "user" as const, content: "Before." },
      { type: "compaction" as const, encrypted_content: blob },
      { role: "user" as const, content: "Go on." },
    ];
    for (const call of [
      () => client.responses.create({ model: "mock/mock-1", input }),
      () => client.responses.compact({ model: "mock/mock-1", input }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).error).toMatchObject({
        type: "invalid_request_error",
        param: "input[1].encrypted_content",
        code: "invalid_encrypted_content",
      });
    }
    expect(await rowCounts(f.database)).toEqual(before);
    expect(f.llm.requests).toHaveLength(1);
  });
});

describe("compact's other errors", () => {
  test("nothing to compact, an unknown previous_response_id, a bad field: 400 with its param", async () => {
    const client = await clientOf();
    const cases: Array<[Parameters<OpenAI["responses"]["compact"]>[0], Record<string, unknown>]> = [
      [{ model: "mock/mock-1" }, { param: "input" }],
      [{ model: "mock/mock-1", input: [] }, { param: "input" }],
      [
        { model: "mock/mock-1", previous_response_id: "resp_nope" },
        { param: "previous_response_id", code: "previous_response_not_found" },
      ],
      [
        { model: "mock/mock-1", input: [{ type: "item_reference", id: "msg_1" }] } as never,
        { param: expect.stringMatching(/^input/) },
      ],
    ];
    for (const [body, error] of cases) {
      const err = await client.responses.compact(body).catch((e: unknown) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).error).toMatchObject({ type: "invalid_request_error", ...error });
    }
    expect(f.llm.requests).toHaveLength(0);
  });

  test("another tenant's previous_response_id: previous_response_not_found, nothing of it read or sent", async () => {
    const stored = await (await clientOf()).responses.create({ model: "mock/mock-1", input: "A secret." });
    const requests = f.llm.requests.length;
    const err = await (
      await clientOf("intruder")
    ).responses
      .compact({ model: "mock/mock-1", previous_response_id: stored.id })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).error).toMatchObject({ code: "previous_response_not_found" });
    expect(f.llm.requests).toHaveLength(requests);
  });

  test("the newest compaction item stands for the items before it, but instructions; a 400 after it names its own place", async () => {
    const client = await clientOf();
    f.llm.script({ text: "SUMMARY: the user counts sheep." }, { text: "Twelve." });
    const item = itemOf(await client.responses.compact({ model: openaiModel(), input: "I count sheep: 11 so far." }));
    const window = [
      { role: "developer" as const, content: "Answer in one word." },
      { role: "user" as const, content: "OLD QUESTION" },
      { role: "assistant" as const, content: "OLD ANSWER" },
      item,
    ];
    const next = await client.responses.create({
      model: openaiModel(),
      input: [...window, { role: "user", content: "One more sheep: how many?" }] as OpenAI.Responses.ResponseInput,
    });
    expect(next.output_text).toBe("Twelve.");
    expect(sent(1)).toContain("Answer in one word.");
    expect(sent(1)).toContain("SUMMARY: the user counts sheep.");
    expect(sent(1)).not.toContain("OLD");
    const err = await client.responses
      .create({
        model: openaiModel(),
        input: [...window, { role: "assistant", content: "Not mine to send." }] as OpenAI.Responses.ResponseInput,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).error).toMatchObject({ param: "input[4]" });
  });

  test("a model that fails: 503 in OpenAI's shape, its words kept in the log; the failed call recorded as a run", async () => {
    const client = await clientOf();
    const before = await rowCounts(f.database);
    f.llm.script({ status: 400, message: "upstream says the prompt is odd" });
    const err = await client.responses.compact({ model: openaiModel(), input: "Hello." }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "server_error" });
    expect(JSON.stringify((err as InstanceType<typeof OpenAI.APIError>).error)).not.toContain("upstream says");
    expect(await rowCounts(f.database)).toEqual({
      ...before,
      conversations: before.conversations + 1,
      runs: before.runs + 1,
    });
  });

  test("a compaction of a compaction alone needs no model call; the key outlives a restart", async () => {
    f.llm.script({ text: "SUMMARY: the code word is ORCHID." });
    const first = itemOf(await (await clientOf()).responses.compact({ model: openaiModel(), input: "ORCHID." }));
    await f.restart();
    const again = await (await clientOf()).responses.compact({ model: openaiModel(), input: [first] });
    const item = itemOf(again);
    expect(again.usage.total_tokens).toBe(0);
    expect(f.llm.requests).toHaveLength(1);
    f.llm.script({ text: "ORCHID." });
    const next = await (
      await clientOf()
    ).responses.create({
      model: openaiModel(),
      input: [item, { role: "user", content: "The code word?" }],
    });
    expect(next.status).toBe("completed");
    expect(sent(1)).toContain("SUMMARY: the code word is ORCHID.");
  });
});
