/**
 * Three real loopd processes behind pgbouncer in transaction mode and a
 * round-robin proxy, under load: streaming runs of several tool steps each,
 * half on Anthropic's wire and half on OpenAI's. One instance is killed
 * (SIGKILL) while every run is under way. Its runs are taken over by the
 * other two when their leases lapse and finish whole: each step's result
 * saved once, in order, each answering its own call (a call the instance
 * died in is answered as interrupted, as the contract says, and the model
 * calls it again); the other instances' streams go on to run.completed
 * unbroken. How much the takeover slows the
 * others is measured in bench (`scale`, kill one of three), not here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startRoundRobinProxy, type RoundRobinProxy } from "../../bench/streams/round-robin-proxy.js";
import { startFakeLlm, type FakeLlm, type RecordedRequest } from "../support/fake-llm/server.js";
import { startPgbouncer, type Pgbouncer } from "../support/helpers/pgbouncer.js";
import { admin } from "../support/helpers/test-database.js";
import { INTERRUPTED_RESULT } from "../../src/core/history.js";
import { SERVER_URL } from "../support/helpers/use-pooled-loopd.js";
import { expectCompleteEventLog, loopdClient, unansweredToolCalls } from "../e2e/loopd-client.js";
import { killAllLoopd, killProcess, sleep, spawnLoopd, type LoopdProcess } from "../e2e/loopd-process.js";
import type { SseReader } from "../e2e/sse-reader.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

const RUNS = 36;
const STEPS = 4;

let llm: FakeLlm;
let bouncer: Pgbouncer;
let proxy: RoundRobinProxy;
let workspaceDir: string;
const instances: LoopdProcess[] = [];
/** Which instance each request went to, by its path (the latest kept). */
const routes = new Map<string, string>();
const name = `loopd_kill_one_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

/**
 * Which run of the test a model request belongs to ("run 7"), and how many
 * of its tool steps are done: results other than the one a takeover gives a
 * call its instance died in (which the model calls again, as it would).
 */
function progressOf(req: RecordedRequest): { run: number; done: number } {
  const messages = req.body.messages as Array<{ role: string; content: unknown }>;
  const run = Number(/\brun (\d+)\b/.exec(JSON.stringify(messages))?.[1]);
  const results =
    req.api === "openai"
      ? messages.filter((m) => m.role === "tool")
      : messages
          .flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string }>) : []))
          .filter((block) => block.type === "tool_result");
  return { run, done: results.filter((r) => !JSON.stringify(r).includes("was interrupted")).length };
}

beforeAll(async () => {
  // Each streamed answer takes a few chunks 60 ms apart: every run is still under way when the instance dies.
  llm = await startFakeLlm({ chunkDelayMs: 60 });
  // Run i's step s computes i * 1000 + s: its result says which call of which run it answers.
  llm.respond = (req) => {
    const { run, done } = progressOf(req);
    return done < STEPS
      ? { toolCalls: [{ name: "calculate", input: { expression: `${run} * 1000 + ${done}` } }] }
      : { text: `run ${run} done` };
  };
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-kill-one-ws-"));
  await admin(SERVER_URL, `create database ${name}`);
  const direct = new URL(SERVER_URL);
  direct.pathname = `/${name}`;
  bouncer = await startPgbouncer(SERVER_URL);
  const env = {
    DATABASE_URL: bouncer.urlOf(direct.toString()),
    DATABASE_DIRECT_URL: direct.toString(),
    DB_POOL_SIZE: "4",
    ANTHROPIC_BASE_URL: llm.url,
    ANTHROPIC_API_KEY: "test",
    OPENAI_BASE_URL: `${llm.url}/v1`,
    OPENAI_API_KEY: "test",
    RUN_LEASE_MS: "1500",
    SHUTDOWN_TIMEOUT_MS: "1000",
    WORKSPACE_DIR: workspaceDir,
    LOG_LEVEL: "warn",
  };
  // One after the other: the first migrates the database.
  for (let i = 0; i < 3; i++) instances.push(await spawnLoopd({ env }));
  proxy = await startRoundRobinProxy(
    instances.map((i) => i.url),
    { onForward: ({ url }, target) => void routes.set(url, target) },
  );
});

afterAll(async () => {
  await proxy?.close();
  await killAllLoopd();
  await bouncer?.close();
  await admin(SERVER_URL, `drop database if exists ${name} with (force)`);
  await llm?.close();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

test("one of three instances killed under load: its runs are taken over and finish whole, the others' streams are not broken", async () => {
  const client = loopdClient(() => proxy.url);
  const conversations: string[] = [];
  for (let i = 0; i < RUNS; i++)
    conversations.push((await client.createConversation({ provider: i % 2 === 0 ? "anthropic" : "openai" })).id);
  const streams: SseReader[] = await Promise.all(conversations.map((id, i) => client.sendStreaming(id, `run ${i}`)));
  expect(streams.map((s) => s.status)).toEqual(conversations.map(() => 200));
  const servedBy = conversations.map((id) => routes.get(`/conversations/${id}/messages`));
  const victim = instances[2]!;
  const onVictim = new Set(conversations.filter((_, i) => servedBy[i] === victim.url));
  expect(onVictim.size).toBeGreaterThan(0);

  // Every run has made its first model call (each makes STEPS + 1, slowly): the kill lands mid-load.
  const started = new Set<number>();
  while (started.size < RUNS) {
    for (const req of llm.requests.splice(0)) started.add(progressOf(req).run);
    await sleep(20);
  }
  expect(await killProcess(victim)).toEqual({ code: null, signal: "SIGKILL" });

  const ends = await Promise.all(streams.map((s) => s.rest(120_000)));
  for (const [i, id] of conversations.entries()) {
    if (onVictim.has(id)) continue;
    // Another instance's stream: whole, a complete log to run.completed.
    expect(ends[i], `run ${i}`).toEqual({ kind: "ended" });
    expect(expectCompleteEventLog(streams[i]!.events).event).toBe("run.completed");
  }
  // The victim's streams broke with it (those of its runs still under way: all, on any but a very slow machine).
  const broken = conversations.filter((_, i) => ends[i]!.kind === "broken");
  expect(broken.length).toBeGreaterThan(0);
  expect(broken.every((id) => onVictim.has(id))).toBe(true);

  for (const [i, id] of conversations.entries()) {
    // From the API, not the stream: a stream the kill broke may have lost even its first event (fetch errors the body, and an errored stream drops what it had not yet handed over).
    const runs = await client.runs(id);
    expect(runs, `run ${i}`).toHaveLength(1);
    const runId = runs[0].id as string;
    expect(await client.waitForRunEnd(id, runId, 120_000), `run ${i}`).toMatchObject({ status: "completed" });
    const history = await client.messages(id);
    expect(unansweredToolCalls(history)).toEqual([]);
    const calls = history.flatMap((m) => m.content.filter((b: any) => b.type === "tool_call"));
    const results = history.filter((m) => m.role === "tool").map((m) => m.content[0]);
    // Every call answered once, right after it: user, (call, result) × calls, the answer.
    expect(history.map((m) => m.role)).toEqual([
      "user",
      ...Array(calls.length).fill(["assistant", "tool"]).flat(),
      "assistant",
    ]);
    expect(results.map((r) => r.tool_call_id)).toEqual(calls.map((c: any) => c.id));
    const interrupted = results.filter((r) => r.is_error);
    expect(interrupted.map((r) => r.content)).toEqual(interrupted.map(() => INTERRUPTED_RESULT));
    if (interrupted.length > 0) expect(onVictim.has(id), `run ${i}`).toBe(true);
    // Each result is its own call's (run i, step s computes i * 1000 + s), and the steps' results are all there, once, in order.
    const answered = results.flatMap((r, j) =>
      r.is_error ? [] : [[calls[j].input.expression, JSON.parse(r.content)]],
    );
    for (const [expression, result] of answered) {
      const [, run, step] = /^(\d+) \* 1000 \+ (\d+)$/.exec(expression)!;
      expect(result).toEqual({ expression, result: Number(run) * 1000 + Number(step) });
    }
    expect(answered.map(([, r]) => r.result)).toEqual(Array.from({ length: STEPS }, (_, step) => i * 1000 + step));
    expect(history.at(-1).content[0].text).toBe(`run ${i} done`);
    const events = await client.allEvents(id, runId);
    expect(expectCompleteEventLog(events).event).toBe("run.completed");
    expect(events.filter((e) => e.event === "tool_call.completed")).toHaveLength(calls.length);
  }
});
