/**
 * Background responses of `/v1/responses`: answered at once, read back,
 * their events resumed from a `sequence_number`, cancelled, carried over a
 * restart; both providers behind loopd.
 */
import OpenAI, { BadRequestError } from "openai";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

let key: string | null = null;
const clientOf = async () => {
  key ??= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  return new OpenAI({ apiKey: key, baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
};
const valid = <T>(response: T): T => {
  expectSchema("ResponseResource", response);
  return response;
};

/** Every event of a response's stream (from `startingAfter`), each checked against the specification. */
async function eventsOf(client: OpenAI, id: string, startingAfter?: number) {
  const events = [];
  const stream = await client.responses.retrieve(id, {
    stream: true,
    ...(startingAfter !== undefined && { starting_after: startingAfter }),
  });
  for await (const event of stream) {
    expectStreamingEvent(event);
    events.push(event);
  }
  return events;
}

describe.each(["anthropic", "openai"] as const)("background responses through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;

  test("answered at once; read back, streamed to its end, resumed after a sequence_number; input_items", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Done in the background.", chunkDelayMs: 20 });
    const created = valid(await client.responses.create({ model: model(), input: "Work.", background: true }));
    expect(created.background).toBe(true);
    expect(["queued", "in_progress"]).toContain(created.status);
    const events = await eventsOf(client, created.id);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.type).toBe("response.completed");
    const resumed = await eventsOf(client, created.id, 2);
    expect(resumed).toEqual(events.slice(3));
    const done = valid(await client.responses.retrieve(created.id));
    expect(done).toMatchObject({ status: "completed", output_text: "Done in the background." });
    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([
      expect.objectContaining({ type: "message", role: "user", content: [{ type: "input_text", text: "Work." }] }),
    ]);
  });

  test("cancel stops a background response; a foreground one cannot be cancelled", async () => {
    const client = await clientOf();
    f.llm.script({ hang: true });
    const created = await client.responses.create({ model: model(), input: "Hang.", background: true });
    const cancelled = valid(await client.responses.cancel(created.id));
    expect(cancelled.status).toBe("cancelled");
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
    f.llm.script({ text: "Quick." });
    const foreground = await client.responses.create({ model: model(), input: "Quick." });
    const refused = await client.responses.cancel(foreground.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequestError);
  });
});

test("a background response goes on after a restart, and its events resume from where the client was", async () => {
  let client = await clientOf();
  // The first call hangs until the server stops; the one made again after the restart answers.
  f.llm.script({ hang: true }, { text: "Carried over." });
  const created = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Survive.", background: true });
  const before = await client.responses.retrieve(created.id);
  expect(["queued", "in_progress"]).toContain(before.status);
  await f.restart();
  key = null;
  client = await clientOf();
  const rest = await eventsOf(client, created.id, 1);
  expect(rest[0]!.sequence_number).toBe(2);
  expect(rest.at(-1)!.type).toBe("response.completed");
  expect(valid(await client.responses.retrieve(created.id)).output_text).toBe("Carried over.");
});
