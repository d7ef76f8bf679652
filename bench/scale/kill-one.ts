import type { Pgbouncer } from "../../test/support/helpers/pgbouncer.js";
import { percentile } from "../lib/measure.js";
import { startFleet, type Via } from "./instance-fleet.js";
import { createConversations, streamedRun, type StreamedRun } from "./streamed-run.js";

export interface KillRow {
  window: "unkilled" | "one killed";
  /** Runs started in the window (at most `concurrency` in flight, each client starting its next when one ends). */
  started: number;
  completed: number;
  runsPerSecond: number;
  /** Runs started on the other two instances after the kill (or after the same moment, unkilled): their first event. */
  othersRuns: number;
  othersTtfeP50: number;
  othersTtfeP99: number;
  /** Of the others' streams, those cut or not ending in run.completed. */
  othersNotWhole: number;
  /** Streams cut by the kill; of their runs, those that then completed (read through the proxy), and the kill to their end. */
  cut: number;
  cutCompleted: number;
  cutNeverStarted: number;
  takeoverP50: number;
  takeoverMax: number;
  /** Ends other than run.completed, counted. */
  failures: Record<string, number>;
}

const TERMINAL = new Set(["completed", "failed", "cancelled", "incomplete", "requires_action"]);

/**
 * Three instances behind the round-robin proxy, `concurrency` streaming runs
 * kept in flight for `seconds`; in the second window one instance is killed
 * (SIGKILL) a third of the way in. The proxy then leaves it out (a refused
 * connection goes to the next), its runs are taken over when their leases
 * lapse (`RUN_LEASE_MS` in `env`), and the others' first events are compared
 * with the unkilled window's, same instances, same moment.
 */
export async function measureKillOne({
  serverUrl,
  via,
  bouncer,
  concurrency,
  seconds,
  steps,
  env,
  progress,
}: {
  serverUrl: string;
  via: Via;
  bouncer: Pgbouncer;
  concurrency: number;
  seconds: number;
  steps: number;
  env: Record<string, string>;
  progress: (line: string) => void;
}): Promise<KillRow[]> {
  const fleet = await startFleet({ serverUrl, via, count: 3, bouncer, env });
  try {
    const url = fleet.proxy.url;
    const maxSteps = steps + 2;
    await Promise.all(
      (await createConversations(url, 60)).map((id) => streamedRun({ url, conversationId: id, maxSteps })),
    );
    const rows: KillRow[] = [];
    for (const window of ["unkilled", "one killed"] as const) {
      progress(`scale: kill one of three, ${window}: ${concurrency} streaming runs in flight for ${seconds} s`);
      const pool = await createConversations(url, concurrency * 3);
      const victim = fleet.instances[2]!.loopd;
      const runs: StreamedRun[] = [];
      const ends: Array<{ status: string | null; at: number | null }> = [];
      const started = performance.now();
      const killAt = started + (seconds * 1000) / 3;
      const endAt = started + seconds * 1000;
      const timer = setTimeout(() => window === "one killed" && process.kill(victim.pid, "SIGKILL"), killAt - started);
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < endAt) {
            const conversationId = pool.pop() ?? (await createConversations(url, 1))[0]!;
            const run = await streamedRun({ url, conversationId, maxSteps });
            runs.push(run);
            // A client whose stream was cut reads its run through the proxy until it ends, then goes on.
            if (!run.whole) ends.push(await waitForEnd(url, run));
          }
        }),
      );
      clearTimeout(timer);
      const wallMs = performance.now() - started;
      const cutRuns = runs.filter((r) => !r.whole);
      const routed = (r: StreamedRun) => fleet.routes.get(`/conversations/${r.conversationId}/messages`);
      const others = runs.filter((r) => r.startedAt >= killAt && routed(r) !== victim.url);
      const ttfe = others.flatMap((r) => (r.ttfe === null ? [] : [r.ttfe])).sort((a, b) => a - b);
      const takeovers = ends.flatMap((e) => (e.at === null ? [] : [e.at - killAt])).sort((a, b) => a - b);
      const failures: Record<string, number> = {};
      for (const r of runs) if (r.end !== "run.completed") failures[r.end] = (failures[r.end] ?? 0) + 1;
      const completed =
        runs.filter((r) => r.end === "run.completed").length + ends.filter((e) => e.status === "completed").length;
      rows.push({
        window,
        started: runs.length,
        completed,
        runsPerSecond: (completed / wallMs) * 1000,
        othersRuns: others.length,
        othersTtfeP50: percentile(ttfe, 0.5),
        othersTtfeP99: percentile(ttfe, 0.99),
        othersNotWhole: others.filter((r) => !r.whole || r.end !== "run.completed").length,
        cut: cutRuns.length,
        cutCompleted: ends.filter((e) => e.status === "completed").length,
        cutNeverStarted: ends.filter((e) => e.status === null).length,
        takeoverP50: percentile(takeovers, 0.5),
        takeoverMax: takeovers.at(-1) ?? Number.NaN,
        failures,
      });
    }
    return rows;
  } finally {
    await fleet.stop();
  }
}

/**
 * A run whose stream was cut, read through the proxy until it ends: its
 * status and when it was seen ended; status null when the conversation has
 * no run (the request died with its instance before the run was made).
 */
async function waitForEnd(url: string, run: StreamedRun): Promise<{ status: string | null; at: number | null }> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const res = await fetch(`${url}/conversations/${run.conversationId}/runs?limit=1`);
    const latest = res.ok ? ((await res.json()) as { data: Array<{ id: string; status: string }> }).data[0] : undefined;
    if (res.ok && !latest) return { status: null, at: null };
    if (latest && TERMINAL.has(latest.status)) return { status: latest.status, at: performance.now() };
    await new Promise((r) => setTimeout(r, 250));
  }
  return { status: "still running after 120 s", at: null };
}
