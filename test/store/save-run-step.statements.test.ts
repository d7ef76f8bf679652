import { expect, test } from "vitest";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// A long lease: renewals (about one a second) rarely land inside a run; the minimum of three runs drops them.
// The test tools: `explode` is a registered tool with effects (a call to a tool not served runs nothing: one write).
const f = useLoopd({ env: { RUN_LEASE_MS: "60000" }, tools: testTools() });

async function statementsOfARun(conversationId: string, toolSteps: number, tool = "calculate"): Promise<number> {
  for (let i = 0; i < toolSteps; i++)
    f.llm.script({
      toolCalls: [tool === "calculate" ? { name: tool, input: { expression: `${i}+1` } } : { name: tool, input: {} }],
    });
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

test.each([
  ["a read-only tool", "calculate", 1, "its answer saved with its result and their events, in one round trip"],
  ["a tool with effects", "explode", 2, "its answer saved before it runs, then its result, each with its events"],
] as const)("a step of %s (%s) costs %i statement(s): %s", async (_what, tool, perStep, _how) => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  await statementsOfARun(conv.id, 1, tool); // warm
  const least = async (toolSteps: number) =>
    Math.min(
      ...[
        await statementsOfARun(conv.id, toolSteps, tool),
        await statementsOfARun(conv.id, toolSteps, tool),
        await statementsOfARun(conv.id, toolSteps, tool),
      ],
    );
  const oneStep = await least(1);
  const fourSteps = await least(4);
  expect((fourSteps - oneStep) / 3).toBe(perStep);
  // The whole run of one tool step, for the record: the request, the run's creation, its history read, the step's saves, the answer.
  expect(oneStep).toBeLessThanOrEqual(14 + perStep);
});
