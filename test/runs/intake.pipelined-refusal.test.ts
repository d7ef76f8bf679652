import { once } from "node:events";
import { connect } from "node:net";
import { expect, onTestFinished, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Before the fix: a request refused before its handler calls `taken` (a body that
// fails validation, on any of the three routes) ends its taking only in
// onResponse, i.e. when the raw response emits 'finish'. On a keep-alive
// connection a response waits behind the one before it (HTTP/1.1
// pipelining: Node queues it until the earlier one ends), so a client that
// pipelines one malformed `POST …/messages` behind a long response of its
// own (a run's event stream; any big answer it does not read) counts as
// being taken for as long as it keeps that first response open: every model
// call of every tenant waits INTAKE_PRIORITY_MS, with one 400 request.

const f = useLoopd({ listen: true, env: { INTAKE_PRIORITY_MS: "10000" } });
const intake = () => f.loopd.services.intake;

const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const newConversation = async (): Promise<string> =>
  ((await (await post("/conversations", { provider: "openai" })).json()) as { id: string }).id;

test(`a refused request queued behind a long response on its connection holds no model call (${testDatabaseKind})`, async () => {
  // The client's own run, going on for as long as it likes (its model call here; a tool, a long answer…).
  const own = await newConversation();
  f.llm.script({ hang: true });
  const started = (await (await post(`/conversations/${own}/messages`, { content: "go on", wait: false })).json()) as {
    run: { id: string };
  };
  await vi.waitFor(() => expect(f.llm.requests).toHaveLength(1), { timeout: 10_000, interval: 5 });

  // Requests that began being taken, counted.
  let begun = 0;
  const begin = intake().begin;
  intake().begin = () => (begun++, begin());
  onTestFinished(() => void (intake().begin = begin));

  // One connection: the run's event stream, then a malformed message pipelined behind it.
  const { port } = new URL(f.loopd.url);
  const socket = connect(Number(port), "127.0.0.1");
  await once(socket, "connect");
  try {
    socket.write(
      `GET /conversations/${own}/runs/${started.run.id}/events HTTP/1.1\r\nHost: localhost\r\n\r\n` +
        `POST /conversations/${own}/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    // The malformed message's body is in: begun, and refused (400) in the same turn of the event loop.
    await vi.waitFor(() => expect(begun).toBe(1), { timeout: 10_000, interval: 5 });

    // Another tenant's run meanwhile: its model call must not wait for a request that was refused.
    const seen: number[] = [];
    f.llm.respond = () => (seen.push(intake().taking), { text: "not held" });
    const t0 = Date.now();
    const res = await post(`/conversations/${await newConversation()}/messages`, { content: "meanwhile" });
    expect(((await res.json()) as { output_text: string }).output_text).toBe("not held");
    expect({ takingWhenCalled: seen, held: Date.now() - t0 < 5_000 ? "under 5 s" : Date.now() - t0 }).toEqual({
      takingWhenCalled: [0],
      held: "under 5 s",
    });
  } finally {
    socket.destroy();
  }
});
