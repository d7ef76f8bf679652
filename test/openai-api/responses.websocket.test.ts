/**
 * WebSocket mode of `/v1/responses` through a real WebSocket client, on both
 * providers: the Open Responses compliance suite's WebSocket scenarios, with
 * every message validated against the specification (a streaming event by
 * its type, an error as `WebSocketErrorEvent`).
 */
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { openResponseSocket, type SocketMessage } from "../support/helpers/response-socket.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true" } });

let key: string | undefined;
const keyOf = async () => (key ??= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key);
const open = async () => openResponseSocket(f.loopd.url, await keyOf());

/** A turn's messages, each valid; a response's events numbered from 0. */
const valid = (messages: SocketMessage[]) => {
  for (const message of messages) {
    if (message.type === "error") expectSchema("WebSocketErrorEvent", message);
    else expectStreamingEvent(message as SocketMessage & { sequence_number: number });
  }
  if (messages[0]?.type !== "error") expect(messages.map((m) => m.sequence_number)).toEqual(messages.map((_, i) => i));
  return messages;
};
/** The response a turn ended with, valid as `ResponseResource`. */
const responseOf = (messages: SocketMessage[]) => {
  const last = messages.at(-1)!;
  expect(last.type, JSON.stringify(last)).toBe("response.completed");
  expectSchema("ResponseResource", last.response);
  return last.response as { id: string; status: string; previous_response_id: string | null; output: unknown[] };
};
const errorOf = (messages: SocketMessage[]) => {
  expect(messages).toHaveLength(1);
  return messages[0] as { type: "error"; status: number; error: { code: string; param: string | null } };
};
const notFound = (messages: SocketMessage[]) =>
  expect(errorOf(valid(messages))).toMatchObject({
    type: "error",
    status: 400,
    error: { type: "invalid_request_error", code: "previous_response_not_found", param: "previous_response_id" },
  });

describe.each(["anthropic", "openai"] as const)("WebSocket mode through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;

  test("one response: the spec's events, numbered in order, ending response.completed; a stored one is read back", async () => {
    const ws = await open();
    f.llm.script({ text: "One two three." });
    const messages = valid(await ws.create({ model: model(), input: "Count to three." }));
    expect(messages.slice(0, 2).map((m) => m.type)).toEqual(["response.created", "response.in_progress"]);
    const deltas = messages.flatMap((m) => (m.type === "response.output_text.delta" ? [m.delta] : []));
    expect(deltas.join("")).toBe("One two three.");
    const response = responseOf(messages);
    const read = await fetch(`${f.loopd.url}/v1/responses/${response.id}`, {
      headers: { authorization: `Bearer ${await keyOf()}` },
    });
    expect(((await read.json()) as { output: unknown }).output).toEqual(response.output);
    ws.socket.close();
  });

  test("responses in sequence on one socket: each its own, numbered from 0", async () => {
    const ws = await open();
    f.llm.script({ text: "first" }, { text: "second" });
    const first = responseOf(valid(await ws.create({ model: model(), store: false, input: "Reply: first" })));
    const second = responseOf(valid(await ws.create({ model: model(), store: false, input: "Reply: second" })));
    expect(second.id).not.toBe(first.id);
    expect(second.previous_response_id).toBeNull();
    // Two separate chains: the second saw nothing of the first.
    expect(JSON.stringify(f.llm.requests[1]!.body)).not.toContain("Reply: first");
    ws.socket.close();
  });

  test("store: false continued on its socket with previous_response_id: the model sees the earlier turn", async () => {
    const ws = await open();
    f.llm.script({ text: "OK." }, { text: "cobalt" }, { text: "Still cobalt." });
    const first = responseOf(
      valid(await ws.create({ model: model(), store: false, input: "Remember the code word: cobalt." })),
    );
    const second = responseOf(
      valid(await ws.create({ model: model(), store: false, previous_response_id: first.id, input: "The word?" })),
    );
    expect(second.previous_response_id).toBe(first.id);
    expect(JSON.stringify(f.llm.requests[1]!.body)).toContain("Remember the code word: cobalt.");
    // Branching from the older one: a copy at its end, without the second turn.
    responseOf(
      valid(await ws.create({ model: model(), store: false, previous_response_id: first.id, input: "Again?" })),
    );
    const third = JSON.stringify(f.llm.requests[2]!.body);
    expect(third).toContain("Remember the code word: cobalt.");
    expect(third).not.toContain("The word?");
    // Nothing of them is stored.
    const read = await fetch(`${f.loopd.url}/v1/responses/${first.id}`, {
      headers: { authorization: `Bearer ${await keyOf()}` },
    });
    expect(read.status).toBe(404);
    ws.socket.close();
  });

  test("store: false on a new socket: previous_response_not_found; a new chain recovers; a stored one continues anywhere", async () => {
    const ws = await open();
    f.llm.script({ text: "OK." }, { text: "Stored." });
    const dropped = responseOf(valid(await ws.create({ model: model(), store: false, input: "The word is copper." })));
    const stored = responseOf(valid(await ws.create({ model: model(), input: "The word is tin." })));
    ws.socket.close();
    await ws.closed;

    const again = await open();
    notFound(await again.create({ model: model(), store: false, previous_response_id: dropped.id, input: "Word?" }));
    f.llm.script({ text: "recovered" }, { text: "tin" });
    responseOf(valid(await again.create({ model: model(), store: false, input: "Start over: reply recovered." })));
    const onStored = responseOf(
      valid(await again.create({ model: model(), store: false, previous_response_id: stored.id, input: "Word?" })),
    );
    expect(onStored.previous_response_id).toBe(stored.id);
    expect(JSON.stringify(f.llm.requests.at(-1)!.body)).toContain("The word is tin.");
    again.socket.close();
  });

  test("an unknown previous_response_id: previous_response_not_found, and the socket goes on", async () => {
    const ws = await open();
    notFound(await ws.create({ model: model(), store: false, previous_response_id: "resp_missing", input: "hi" }));
    f.llm.script({ text: "Fine." });
    responseOf(valid(await ws.create({ model: model(), store: false, input: "hi" })));
    ws.socket.close();
  });

  test("a failed continuation evicts what it continued from: previous_response_not_found after", async () => {
    const ws = await open();
    f.llm.script({ text: "OK." });
    const first = responseOf(valid(await ws.create({ model: model(), store: false, input: "The word is ember." })));
    const failed = errorOf(
      valid(
        await ws.create({
          model: model(),
          store: false,
          previous_response_id: first.id,
          input: [{ type: "function_call_output", call_id: "call_missing", output: "no such call" }],
        }),
      ),
    );
    expect(failed).toMatchObject({ status: 400, error: { type: "invalid_request_error", param: "input[0].call_id" } });
    notFound(await ws.create({ model: model(), store: false, previous_response_id: first.id, input: "Word?" }));
    expect(f.llm.requests).toHaveLength(1);
    ws.socket.close();
  });
});
