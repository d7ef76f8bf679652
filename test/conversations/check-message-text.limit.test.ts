/**
 * A message's text, every text block together, is at most
 * MAX_MESSAGE_TEXT_BYTES (1 MiB): it is sent to the model again on every later
 * call. Past it: 413 naming the field, nothing saved. Only images and
 * documents may use the larger body a message's route takes.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const LIMIT = 1_048_576;
const f = useLoopd({ listen: true });

const post = (url: string, body: unknown) => f.loopd.app.inject({ method: "POST", url, payload: body as object });
const conversation = async () => (await post("/conversations", { provider: "mock" })).json().id as string;

test("a 60 MB plain-text message: 413 naming content, nothing saved, and the server answers meanwhile", async () => {
  const id = await conversation();
  const before = await rowCounts(f.database);
  // Encoded before the clock starts: the client's own work (in this process) is not the server's.
  const body = Buffer.from(JSON.stringify({ content: "lorem ipsum ".repeat(5_000_000) }));
  expect(body.length).toBeGreaterThan(60_000_000);

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const startedAt = performance.now();
  const sending = fetch(`${f.loopd.url}/conversations/${id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  let answered = 0;
  let done = false;
  const sent = sending.finally(() => (done = true));
  while (!done) {
    expect((await fetch(`${f.loopd.url}/healthz`)).status).toBe(200);
    answered++;
  }
  const res = await sent;
  const elapsed = performance.now() - startedAt;
  delay.disable();
  expect(res.status).toBe(413);
  const { error } = (await res.json()) as {
    error: { code: string; message: string; details: Record<string, unknown> };
  };
  // Refused by its size, before it is parsed: the part of the body that is not attachments is held to BODY_LIMIT_BYTES.
  expect(error).toMatchObject({
    code: "payload_too_large",
    details: { field: "body.content", limit: f.loopd.config.server.bodyLimitBytes },
  });
  expect(error.message).toMatch(/^body\.content: .*BODY_LIMIT_BYTES/);
  expect(await rowCounts(f.database)).toEqual(before);
  console.info(
    `60 MB text message refused in ${elapsed.toFixed(0)} ms; event loop max delay ${(delay.max / 1e6).toFixed(0)} ms; ${answered} health checks answered meanwhile`,
  );
});

test("text blocks count together; a long text may go as a text/plain document instead", async () => {
  const id = await conversation();
  const before = await rowCounts(f.database);
  const half = "é".repeat(LIMIT / 4 + 1); // 2 bytes each: just over half the limit
  const res = await post(`/conversations/${id}/messages`, {
    content: [
      { type: "text", text: half },
      { type: "text", text: half },
    ],
  });
  const error = expectError(res, 413, "payload_too_large");
  expect(error.details).toMatchObject({ field: "body.content", limit: LIMIT, bytes: 4 * (LIMIT / 4 + 1) });
  expect(await rowCounts(f.database)).toEqual(before);

  const document = {
    type: "document",
    source: { type: "base64", media_type: "text/plain", data: Buffer.from(half + half).toString("base64") },
    title: "notes",
  };
  const taken = await post(`/conversations/${id}/messages`, {
    content: [{ type: "text", text: "Summarize the notes." }, document],
  });
  expect(taken.statusCode, taken.body.slice(0, 300)).toBe(200);
});

test("the chat route too: a user message whose text parts pass the limit is a 413 naming its parts, and makes no conversation", async () => {
  const before = await rowCounts(f.database);
  const res = await post("/ui/chat", {
    id: "chat-too-long",
    trigger: "submit-message",
    messages: [
      {
        id: "m1",
        role: "user",
        parts: [
          { type: "text", text: "x".repeat(600_000) },
          { type: "text", text: "y".repeat(600_000) },
        ],
      },
    ],
  });
  const error = expectError(res, 413, "payload_too_large");
  expect(error.details).toMatchObject({ field: "body.messages[0].parts", limit: LIMIT });
  expect(await rowCounts(f.database)).toEqual(before);
});
