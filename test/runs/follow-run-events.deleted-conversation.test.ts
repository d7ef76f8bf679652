import { expect, test } from "vitest";
import { followRunEvents } from "../../src/runs/follow-run-events.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();

// A reader behind the run's last write (a slow client held on its socket, say) when the conversation is deleted:
// it used to read the database, find nothing and end with run_gone (the stream's conversation.deleted); now the
// run's last batch, kept in memory for 10 s after its end, is served to it after the DELETE answered 204.
test("a follower behind the run's last write, resuming after its conversation was deleted, ends run_gone without being handed the deleted run's events", async () => {
  f.llm.script({ text: "secret answer" });
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  const run = (
    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/messages`, payload: { content: "hi" } })
  ).json().run;
  const events = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}/events` }))
    .body;
  const seqs = [...events.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  expect((await f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` })).statusCode).toBe(204);

  const follow = followRunEvents(f.loopd.services, { runId: run.id, conversationId: conv.id, after: seqs.at(-2)! });
  const got: string[] = [];
  let next = await follow.next();
  for (; !next.done; next = await follow.next())
    got.push(...next.value.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 60)}`));
  expect({ got, end: next.value }).toEqual({ got: [], end: { type: "run_gone" } });
});
