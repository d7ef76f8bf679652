/**
 * A2A's streams are loopd's streams: they count against the tenant's share
 * of open streams, and one past it is refused before anything starts.
 */
import { TaskState } from "@a2a-js/sdk";
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { a2aClient, userMessage } from "./a2a-client.js";

const f = useLoopd({ listen: true, env: { MAX_STREAMS_PER_TENANT: "1" } });

test("a second stream past the tenant's share: 429 too_many_streams, no run started; a send without a stream still goes", async () => {
  const made = await fetch(`${f.loopd.url}/agents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "streamer", provider: "anthropic" }),
  });
  expect(made.status).toBe(201);
  f.llm.script({ text: "slow ".repeat(30), chunkDelayMs: 50 }, { text: "Not streamed." });
  const client = await a2aClient(f.loopd.url, "streamer", null);
  const first = client.sendMessageStream(userMessage("Stream, slowly."));
  const opened = await first.next();
  expect(opened.value?.payload?.$case).toBe("task");

  const second = await fetch(`${f.loopd.url}/a2a/streamer`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: { messageId: "m2", role: "ROLE_USER", parts: [{ text: "Another" }] } },
    }),
  });
  expect(second.status).toBe(429);
  expect(((await second.json()) as any).error.code).toBe("too_many_streams");
  expect(f.llm.requests).toHaveLength(1);

  for await (const _ of first); // the first stream runs to its end, and frees its place
  const sent = await client.sendMessage(userMessage("Now without a stream."));
  expect(sent).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED } });
});
