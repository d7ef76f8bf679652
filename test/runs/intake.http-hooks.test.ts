import { connect } from "node:net";
import { expect, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Long enough that a model call goes only when the intake is quiet: a request counted and never taken would stall the tests.
const f = useLoopd({ listen: true, env: { INTAKE_PRIORITY_MS: "10000" } });
const intake = () => f.loopd.services.intake;

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
const newConversation = async (): Promise<string> =>
  ((await (await post("/conversations", { provider: "openai" })).json()) as { id: string }).id;

test(`a run's model call waits while a request that starts a run is being taken, and goes once it is taken (${testDatabaseKind})`, async () => {
  f.llm.script({ text: "hello" });
  const conversation = await newConversation();
  const taken = intake().begin();
  const res = await post(`/conversations/${conversation}/messages`, { content: "hi", wait: false });
  expect(res.status).toBe(202);
  const { run } = (await res.json()) as { run: { id: string } };
  await vi.waitFor(() => expect(intake().waiting).toBe(1), { timeout: 10_000, interval: 10 });
  expect(f.llm.requests).toHaveLength(0);

  taken();
  const events = await (await fetch(`${f.loopd.url}/conversations/${conversation}/runs/${run.id}/events`)).text();
  expect(events).toMatch(/event: run\.completed/);
  expect(f.llm.requests).toHaveLength(1);
  expect(intake()).toMatchObject({ taking: 0, waiting: 0 });
  // Operators see it: the call held, and for how long.
  const metrics = await (await fetch(`${f.loopd.url}/metrics`)).text();
  expect(metrics).toMatch(/^loopd_model_calls_held_total 1$/m);
  expect(Number(/^loopd_model_calls_held_seconds_total (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
});

test(`every request that starts a run is taken whatever its outcome: started, streamed, in the background, malformed, unknown, answered wrongly, or refused by the chat protocol (${testDatabaseKind})`, async () => {
  f.llm.script({ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" });
  const conversation = await newConversation();
  const messages = `/conversations/${conversation}/messages`;
  const userMessage = { id: "m1", role: "user", parts: [{ type: "text", text: "via the AI SDK" }] };
  const requests: Array<[string, unknown]> = [
    [messages, { content: "waited for" }],
    [messages, { content: "streamed", stream: true }],
    [messages, { content: "in the background", wait: false }],
    [messages, { content: "" }],
    [messages, { nothing: true }],
    ["/conversations/conv_unknown/messages", { content: "nobody" }],
    [`/conversations/${conversation}/runs/run_unknown/actions`, { approvals: [] }],
    ["/ui/chat", { id: "chat_intake", trigger: "regenerate-message", messages: [userMessage] }],
    ["/ui/chat", { id: "chat_intake", trigger: "submit-message", messages: [userMessage] }],
  ];
  const outcomes: Array<{ status: number; body: string }> = [];
  for (const [path, body] of requests) {
    const res = await post(path, body);
    outcomes.push({ status: res.status, body: await res.text() });
    // The run in the background ends before the next message to its conversation.
    if (res.status === 202)
      await (
        await fetch(
          `${f.loopd.url}/conversations/${conversation}/runs/${JSON.parse(outcomes.at(-1)!.body).run.id}/events`,
        )
      ).text();
  }
  expect(outcomes.map((o) => o.status)).toEqual([200, 200, 202, 400, 400, 404, 404, 200, 200]);
  expect(outcomes[1]!.body).toMatch(/event: run\.completed/);
  expect(outcomes[7]!.body).toMatch(/append-only/);

  await vi.waitFor(() => expect(intake()).toMatchObject({ taking: 0, waiting: 0 }), { timeout: 10_000, interval: 10 });
});

test(`a client trickling its body in holds no run's model call (${testDatabaseKind})`, async () => {
  const { port } = new URL(f.loopd.url);
  const conversation = await newConversation();
  const slow = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => slow.once("connect", resolve).once("error", reject));
  slow.write(
    `POST /conversations/${conversation}/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"content":"`,
  );
  try {
    // What the intake held when the model was called: a slow upload counted would have held the call 10 s, and still count.
    const seen: number[] = [];
    f.llm.respond = () => (seen.push(intake().taking), { text: "not held" });
    const res = await post(`/conversations/${await newConversation()}/messages`, { content: "meanwhile" });
    expect(((await res.json()) as { output_text: string }).output_text).toBe("not held");
    expect(seen).toEqual([0]);
  } finally {
    slow.destroy();
  }
});
