import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

// A long lease: renewals (about one a second) rarely land inside a run; the minimum of three runs drops them.
const f = useLoopd({ env: { RUN_LEASE_MS: "60000" } });

async function statementsOfARun(conversationId: string, toolSteps: number): Promise<number> {
  for (let i = 0; i < toolSteps; i++)
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: `${i}+1` } }] });
  f.llm.script({ text: "Done." });
  const before = f.database.statements();
  const res = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conversationId}/messages`,
    payload: { content: "Add up", max_steps: 10 },
  });
  const used = f.database.statements() - before;
  expect(res.json().run).toMatchObject({ status: "completed", steps: toolSteps + 1 });
  return used;
}

test("a step costs two statements: the model's answer and the tool's result, each saved with its events in one round trip", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  await statementsOfARun(conv.id, 1); // warm
  const least = async (toolSteps: number) =>
    Math.min(
      ...[
        await statementsOfARun(conv.id, toolSteps),
        await statementsOfARun(conv.id, toolSteps),
        await statementsOfARun(conv.id, toolSteps),
      ],
    );
  const oneStep = await least(1);
  const fourSteps = await least(4);
  expect((fourSteps - oneStep) / 3).toBe(2);
  // The whole run of one tool step, for the record: the request, the run's creation, its history read, 2 + 2 saves, the answer.
  expect(oneStep).toBeLessThanOrEqual(16);
});
