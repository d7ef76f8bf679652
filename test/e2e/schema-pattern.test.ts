import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, spawnLoopd } from "./loopd-process.js";

// A real process that compiles the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * A `pattern` in a schema the client wrote (the finish tool's result_schema)
 * is matched against what the model sent. A backtracking engine on the main
 * thread froze the whole server for `^(a+)+$` on 29 characters (38 s); here
 * 40 would take days. In a process of its own, so that a freeze fails this
 * test instead of hanging the test runner.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-pattern-"));
afterAll(async () => {
  await killAllLoopd();
  rmSync(scratch, { recursive: true, force: true });
});

test("a catastrophic pattern in result_schema is judged in linear time: the run ends, and the server answers meanwhile", async () => {
  const loopd = await spawnLoopd({ env: { DATA_DIR: path.join(scratch, "data") } });
  const client = loopdClient(() => loopd.url);
  const conversation = await client.createConversation({
    provider: "mock",
    finish: {
      result_schema: {
        type: "object",
        properties: { code: { type: "string", pattern: "^(a+)+$" } },
        required: ["code"],
      },
    },
  });
  const evil = `${"a".repeat(40)}!`;
  // The mock calls any offered tool the message spells out.
  const sent = fetch(`${loopd.url}/conversations/${conversation.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      content: `finish ${JSON.stringify({ summary: "s", result: { code: evil } })}`,
      max_steps: 2,
    }),
    signal: AbortSignal.timeout(60_000),
  }).then(
    (res) => res.json() as Promise<any>,
    (err: unknown) => err,
  );
  const health = await fetch(`${loopd.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
  expect(health.status).toBe(200);
  const body = await sent;
  // The value does not match: the model is told so, and its next plain answer ends the run.
  const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
  expect(results[0]).toMatchObject({ name: "finish", is_error: true, content: expect.stringMatching(/result\.code/) });
  expect(body.run.status).not.toBe("running");
});

test("a small result_schema whose check would take days is given up, the server answering meanwhile", async () => {
  // 1.8 KB: 40 levels that each refer to the next twice, 2^40 steps to check a value; the main thread would be held for good.
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++)
    $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs.d40 = { type: "number" };
  const loopd = await spawnLoopd({ env: { DATA_DIR: path.join(scratch, "data-refs") } });
  const client = loopdClient(() => loopd.url);
  const conversation = await client.createConversation({
    provider: "mock",
    finish: { result_schema: { $ref: "#/$defs/d0", $defs } },
  });
  const sent = fetch(`${loopd.url}/conversations/${conversation.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: `finish ${JSON.stringify({ summary: "s", result: 1 })}`, max_steps: 2 }),
    signal: AbortSignal.timeout(60_000),
  }).then((res) => res.json() as Promise<any>);
  const health = await fetch(`${loopd.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
  expect(health.status).toBe(200);
  const body = await sent;
  const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
  expect(results[0]).toMatchObject({
    name: "finish",
    is_error: true,
    content: expect.stringMatching(/result: could not be checked against the schema: it took longer than/),
  });
  expect(body.run.status).not.toBe("running");
});
