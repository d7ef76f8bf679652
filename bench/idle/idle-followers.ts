import { readFileSync } from "node:fs";
import pg from "pg";
import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { readSse } from "../../test/support/helpers/sse-client.js";

export interface IdleFollowersRow {
  followers: number;
  /** Statements per second the database ran while every follower waited (Postgres only; null on PGlite). */
  statementsPerSecond: number | null;
  /** loopd's resident memory before the followers came, and while they wait (MiB). */
  rssBeforeMiB: number;
  rssWithFollowersMiB: number;
}

/**
 * `followers` SSE clients follow one run that is waiting on its model (the
 * fake LLM holds the call open), so nothing new happens: what loopd costs
 * while they wait is the cost of idle followers. On Postgres the database's
 * own transaction counters say how many statements it ran over `windowMs`.
 */
export async function measureIdleFollowers({
  llm,
  loopdUrl,
  loopdPid,
  databaseUrl,
  followers,
  windowMs = 10_000,
}: {
  llm: FakeLlm;
  loopdUrl: string;
  loopdPid: number;
  /** The database loopd uses, when it is a Postgres server. */
  databaseUrl: string | undefined;
  followers: number;
  windowMs?: number;
}): Promise<IdleFollowersRow> {
  const conv = (await (await post(`${loopdUrl}/conversations`, { provider: "openai" })).json()) as { id: string };
  llm.script({ hang: true });
  const hold = new AbortController();
  const run = await post(
    `${loopdUrl}/conversations/${conv.id}/messages`,
    { content: "Take your time", stream: true },
    hold.signal,
  );
  const runId = run.headers.get("x-loopd-run-id");
  const rssBeforeMiB = rssMiB(loopdPid);

  const url = `${loopdUrl}/conversations/${conv.id}/runs/${runId}/events`;
  await Promise.all(Array.from({ length: followers }, () => follow(url, hold.signal)));
  await sleep(1_000); // every follower is waiting now

  const before = databaseUrl ? await transactions(databaseUrl) : 0;
  const started = Date.now();
  await sleep(windowMs);
  const statementsPerSecond = databaseUrl
    ? ((await transactions(databaseUrl)) - before) / ((Date.now() - started) / 1000)
    : null;
  const rssWithFollowersMiB = rssMiB(loopdPid);

  await post(`${loopdUrl}/conversations/${conv.id}/runs/${runId}/cancel`, {});
  hold.abort();
  return { followers, statementsPerSecond, rssBeforeMiB, rssWithFollowersMiB };
}

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });

/** Opens a follower and resolves once it has the run's first two events; it stays open until `signal` aborts. */
async function follow(url: string, signal: AbortSignal): Promise<void> {
  const res = await fetch(url, { signal });
  if (res.status !== 200) throw new Error(`follower: ${res.status} ${await res.text()}`);
  const events = readSse(res);
  for (let seen = 0; seen < 2;) {
    const { value, done } = await events.next();
    if (done) throw new Error("the stream ended early");
    if ("event" in value) seen++;
  }
}

/** Transactions the server ran in loopd's database (every statement outside a transaction is one). */
async function transactions(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Counters are flushed by each backend about once a second; force ours to be current.
    await client.query("select pg_stat_clear_snapshot()");
    const { rows } = await client.query<{ n: string }>(
      "select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()",
    );
    // This connection's own statements count too: three, subtracted.
    return Number(rows[0]!.n) - 3;
  } finally {
    await client.end();
  }
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
