import { expect, test } from "vitest";
import { checkUserSchema } from "../src/check-user-schema.js";

/** A schema of linear size whose check takes 2^depth steps (and, for a value that fails, lists 2^depth errors): each level refers to the next twice. */
function doublingSchema(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs[`d${depth}`] = { type: "number" };
  return { $ref: "#/$defs/d0", $defs };
}

test("problems are found in the worker and named where they are", async () => {
  const schema = { type: "object", properties: { n: { type: "number" }, code: { type: "string", pattern: "^(a+)+$" } }, required: ["n"] };
  expect(await checkUserSchema(schema, { n: 1, code: "aaa" })).toEqual([]);
  expect(await checkUserSchema(schema, { code: `${"a".repeat(60)}!` })).toEqual([
    { path: ["n"], message: "is required" },
    { path: ["code"], message: 'must match pattern "^(a+)+$"' },
  ]);
});

test("a check that would take days is given up at its timeout, the event loop free meanwhile", async () => {
  let ticks = 0;
  const ticking = setInterval(() => ticks++, 20);
  try {
    const problems = await checkUserSchema(doublingSchema(40), 1, { timeoutMs: 1_000 });
    expect(problems).toEqual([{ path: [], message: "could not be checked against the schema: it took longer than 1 s" }]);
    // Held on the main thread, the interval would not have run once.
    expect(ticks).toBeGreaterThan(5);
  } finally {
    clearInterval(ticking);
  }
});

test("a check whose errors multiply stops at the worker's memory, not the process's", async () => {
  const problems = await checkUserSchema(doublingSchema(23), "not a number", { timeoutMs: 120_000 });
  expect(problems).toEqual([{ path: [], message: "could not be checked against the schema: it needed more memory than a check may use" }]);
}, 150_000);

test("a check is stopped with its run", async () => {
  const controller = new AbortController();
  const checking = checkUserSchema(doublingSchema(40), 1, { signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await expect(checking).rejects.toThrow("cancelled");
});
