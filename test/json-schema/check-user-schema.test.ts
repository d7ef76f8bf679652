import { expect, test } from "vitest";
import { checkUserSchema, schemaCheckPool } from "../../src/json-schema/check-user-schema.js";

/** A schema of linear size whose check takes 2^depth steps (and, for a value that fails, lists 2^depth errors): each level refers to the next twice. */
function doublingSchema(depth: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++)
    $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs[`d${depth}`] = { type: "number" };
  return { $ref: "#/$defs/d0", $defs };
}

test("problems are found in the worker and named where they are", async () => {
  const schema = {
    type: "object",
    properties: { n: { type: "number" }, code: { type: "string", pattern: "^(a+)+$" } },
    required: ["n"],
  };
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
    expect(problems).toEqual([
      { path: [], message: "could not be checked against the schema: it took longer than 1 s" },
    ]);
    // Held on the main thread, the interval would not have run once.
    expect(ticks).toBeGreaterThan(5);
  } finally {
    clearInterval(ticking);
  }
});

test("a check whose errors multiply stops at the worker's memory, not the process's", async () => {
  const problems = await checkUserSchema(doublingSchema(23), "not a number", { timeoutMs: 120_000 });
  expect(problems).toEqual([
    { path: [], message: "could not be checked against the schema: it needed more memory than a check may use" },
  ]);
}, 150_000);

test("a check is stopped with its run", async () => {
  const controller = new AbortController();
  const checking = checkUserSchema(doublingSchema(40), 1, { signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await expect(checking).rejects.toThrow("cancelled");
});

test("at most two checks run at once, the others wait their turn; a check that leaves its turn leaves the line, and a worker that answered is kept", async () => {
  const controller = new AbortController();
  const slow = Array.from({ length: 4 }, () => checkUserSchema(doublingSchema(40), 1, { timeoutMs: 500 }));
  const leaving = checkUserSchema({ type: "number" }, 1, { signal: controller.signal });
  await new Promise((resolve) => setImmediate(resolve));
  expect(schemaCheckPool()).toMatchObject({ running: 2, waiting: 3 });
  controller.abort(new Error("gone"));
  await expect(leaving).rejects.toThrow("gone");
  expect(schemaCheckPool().waiting).toBe(2);
  for (const problems of await Promise.all(slow))
    expect(problems).toEqual([
      { path: [], message: "could not be checked against the schema: it took longer than 0.5 s" },
    ]);
  // Those that timed out were terminated; one that answers is kept for the next check.
  expect(await checkUserSchema({ type: "number" }, "x")).toEqual([{ path: [], message: "must be number" }]);
  expect(schemaCheckPool()).toEqual({ running: 0, waiting: 0, idle: 1 });
}, 30_000);
