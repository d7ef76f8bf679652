import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Before the fix: POST /ui/chat calls `taken(req)` only after sendMessage/answerAction
// succeeded; on every other path (the chat or conversation unknown, a run not
// waiting, sendMessage refusing: busy, queue full, too many runs…) it relies on
// onResponse or onRequestAbort. Neither fires when the client goes away after
// its body is in and before the refusal is written: onResponse needs the raw
// response's 'finish' (never emitted on a closed socket), and onRequestAbort
// fires only when `req.aborted`, which Node sets only while the body is still
// being read — never once the body is in, the moment preValidation began.
// The count then never goes back down: every model call in the process waits
// INTAKE_PRIORITY_MS, forever.

const f = useLoopd({ listen: true, env: { INTAKE_PRIORITY_MS: "10000" } });
const intake = () => f.loopd.services.intake;

/** Holds every read of `conversations` (PGlite: the whole database) until the returned function is called. */
async function holdConversations(): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const tx = f.database.db.transaction(async (t) => {
    await t.execute(sql`lock table conversations in access exclusive mode`);
    locked();
    await released;
  });
  await isLocked;
  return async () => {
    release();
    await tx;
  };
}

test(`a chat request refused after its client went away is still taken (${testDatabaseKind})`, async () => {
  const { port } = new URL(f.loopd.url);
  const body = JSON.stringify({
    id: "conv_unknown",
    trigger: "submit-message",
    messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }],
  });

  const release = await holdConversations();
  let serverSide!: Socket;
  const accepted = new Promise<void>((resolve) =>
    f.loopd.app.server.once("connection", (s: Socket) => ((serverSide = s), resolve())),
  );
  const client = connect(Number(port), "127.0.0.1");
  await once(client, "connect");
  await accepted;
  client.write(
    `POST /ui/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  // Its body is in: the request is being taken, and its handler waits for the conversation.
  while (intake().taking === 0) await new Promise((r) => setImmediate(r));
  // The user closes the tab.
  client.destroy();
  await once(serverSide, "close");
  // The conversation is read: unknown, 404 — to a socket that is gone.
  await release();

  // Whatever the handler did is over once a later request to the same routes has been answered.
  const res = await fetch(`${f.loopd.url}/ui/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  expect(res.status).toBe(404);

  // A run started now: its model call must not be held by a request nobody is taking any more.
  const seen: number[] = [];
  f.llm.respond = () => (seen.push(intake().taking), { text: "not held" });
  const conversation = (
    (await (
      await fetch(`${f.loopd.url}/conversations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "openai" }),
      })
    ).json()) as { id: string }
  ).id;
  const started = Date.now();
  const sent = await fetch(`${f.loopd.url}/conversations/${conversation}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "meanwhile" }),
  });
  expect(((await sent.json()) as { output_text: string }).output_text).toBe("not held");
  expect({ takingWhenCalled: seen, heldMs: Date.now() - started < 5_000 ? "under 5 s" : Date.now() - started }).toEqual(
    { takingWhenCalled: [0], heldMs: "under 5 s" },
  );
  expect(intake().taking).toBe(0);
});
