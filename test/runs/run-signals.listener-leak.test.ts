/** Many streams at once leave no signal with more listeners than Node allows before it warns of a leak. */
import { afterAll, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const warnings: Error[] = [];
const onWarning = (w: Error) => void (w.name === "MaxListenersExceededWarning" && warnings.push(w));
process.on("warning", onWarning);
afterAll(() => void process.off("warning", onWarning));
const f = useLoopd({ listen: true });

test("30 streaming runs at once, each a tool round trip: no MaxListenersExceededWarning", async () => {
  f.llm.respond = (req) =>
    (req.body.messages as { role: string }[]).some((m) => m.role === "tool")
      ? { text: "4." }
      : { toolCalls: [{ name: "calculate", input: { expression: "2+2" } }], chunkDelayMs: 20 };
  const conversations = await Promise.all(
    Array.from(
      { length: 30 },
      async () =>
        (
          (await (
            await fetch(`${f.loopd.url}/conversations`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: "{}",
            })
          ).json()) as { id: string }
        ).id,
    ),
  );
  const streams = await Promise.all(
    conversations.map(async (id) => {
      const res = await fetch(`${f.loopd.url}/conversations/${id}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ content: "2+2?", stream: true }),
      });
      return res.text();
    }),
  );
  for (const body of streams) expect(body).toContain("run.completed");
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.map((w) => w.stack)).toEqual([]);
});
