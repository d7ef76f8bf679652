import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { streamOne } from "../streams/concurrent-streams.js";
import { percentile } from "../lib/measure.js";
import { SCENARIOS } from "../lib/run-shapes.js";
import { startLoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

/** One N: the flooding tenant's burst, and the quiet tenant with and without it. */
export interface FloodRow {
  /** Streaming runs tenant A started at once, each round. */
  flood: number;
  /** A's runs that completed, and those refused or failed, by status and code ("429 too_many_runs"). */
  floodCompleted: number;
  floodRefused: Record<string, number>;
  /** A's completed runs per second of its bursts. */
  floodRunsPerSecond: number;
  /** Tenant B's runs: with A's flood, and alone for as long. */
  withFlood: QuietTenant;
  alone: QuietTenant;
}

export interface QuietTenant {
  runs: number;
  failures: Record<string, number>;
  runsPerSecond: number;
  /** Time to the first SSE event (ms), from the request's start. */
  ttfeP50: number;
  ttfeP99: number;
}

/**
 * flood: Two tenants on one loopd (keys on, `MAX_ACTIVE_RUNS_PER_TENANT` =
 * `cap`): tenant A starts N streaming tool round trips at once while tenant B
 * keeps `quiet` of them in flight (each on a conversation of its own, created
 * untimed just before), until A's burst is over; then B alone for as long.
 * Rounds alternate the two, so both see the same machine.
 */
export async function measureTenantFlood({
  serverUrl,
  floods,
  quiet,
  cap,
  rounds,
  logLevel,
  progress,
}: {
  serverUrl: string | undefined;
  floods: number[];
  quiet: number;
  cap: number;
  rounds: number;
  logLevel: string;
  progress: (line: string) => void;
}): Promise<FloodRow[]> {
  const llm = await startFakeLlm();
  const respond = SCENARIOS.tool.respond;
  llm.respond = (req) => {
    llm.requests.length = 0;
    return respond(req);
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-flood-"));
  const database = await createBenchDatabase(serverUrl);
  const adminToken = "bench-admin-token-0123456789";
  const loopd = await startLoopdProcess({
    env: {
      ...database.env,
      ...openAiOnFakeLlm(llm.url),
      LOG_LEVEL: logLevel,
      WORKSPACE_DIR: dir,
      API_KEYS_REQUIRED: "true",
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_PER_MIN: "100000",
      MAX_ACTIVE_RUNS_PER_TENANT: String(cap),
      // Its default (a tenth of MAX_STREAMS), which the bench's other sections raise.
      MAX_STREAMS_PER_TENANT: "100",
    },
  });
  try {
    const keyOf = async (tenant: string) => {
      const res = await fetch(`${loopd.url}/admin/keys`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ tenant }),
      });
      if (!res.ok) throw new Error(`POST /admin/keys: ${res.status} ${await res.text()}`);
      return { authorization: `Bearer ${((await res.json()) as { key: string }).key}` };
    };
    const a = await keyOf("flooder");
    const b = await keyOf("quiet");
    const conversation = (headers: Record<string, string>) => createConversation(loopd.url, headers);
    const run = async (headers: Record<string, string>, conversationId?: string) =>
      streamOne({ url: loopd.url, conversationId: conversationId ?? (await conversation(headers)), headers });
    // Warm-up: connections opened, code paths compiled, for both tenants.
    await Promise.all(Array.from({ length: quiet }, () => Promise.all([run(a), run(b)])));

    /** B's `quiet` workers, each starting its next run on a new conversation until `until()` says stop. */
    const quietTenant = async (until: () => boolean) => {
      const ttfe: number[] = [];
      const failures: Record<string, number> = {};
      let completed = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: quiet }, async () => {
          while (!until()) {
            const outcome = await run(b);
            if (outcome.ttfe !== null) ttfe.push(outcome.ttfe);
            if (outcome.failure === null) completed++;
            else failures[outcome.failure] = (failures[outcome.failure] ?? 0) + 1;
          }
        }),
      );
      return { ttfe, failures, completed, wallMs: performance.now() - started };
    };
    const rows: FloodRow[] = [];
    for (const n of floods) {
      const tally = {
        flood: { completed: 0, refused: {} as Record<string, number>, wallMs: 0 },
        with: emptyQuiet(),
        alone: emptyQuiet(),
      };
      for (let round = 1; round <= rounds; round++) {
        progress(
          `tenant A floods ${n} streaming runs at once, tenant B keeps ${quiet} going (round ${round}/${rounds})`,
        );
        const floodConversations = await Promise.all(Array.from({ length: n }, () => conversation(a)));
        let floodOver = false;
        const t0 = performance.now();
        const [outcomes, withFlood] = await Promise.all([
          Promise.all(floodConversations.map((id) => run(a, id))).finally(() => (floodOver = true)),
          quietTenant(() => floodOver),
        ]);
        const floodMs = performance.now() - t0;
        tally.flood.wallMs += floodMs;
        for (const o of outcomes) {
          if (o.failure === null) tally.flood.completed++;
          else tally.flood.refused[o.failure] = (tally.flood.refused[o.failure] ?? 0) + 1;
        }
        addQuiet(tally.with, withFlood);
        const aloneUntil = performance.now() + floodMs;
        addQuiet(tally.alone, await quietTenant(() => performance.now() >= aloneUntil));
        progress(
          `  A: ${outcomes.filter((o) => o.failure === null).length} completed in ${floodMs.toFixed(0)} ms; B first event p99 with · without: ${percentile(sorted(withFlood.ttfe), 0.99).toFixed(0)} · ${percentile(sorted(tally.alone.ttfe.slice(-tally.alone.lastCount)), 0.99).toFixed(0)} ms`,
        );
      }
      rows.push({
        flood: n,
        floodCompleted: tally.flood.completed,
        floodRefused: tally.flood.refused,
        floodRunsPerSecond: (tally.flood.completed / tally.flood.wallMs) * 1000,
        withFlood: quietOf(tally.with),
        alone: quietOf(tally.alone),
      });
    }
    return rows;
  } finally {
    llm.respond = null;
    await loopd.stop();
    await llm.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface QuietTally {
  ttfe: number[];
  failures: Record<string, number>;
  completed: number;
  wallMs: number;
  /** How many of `ttfe` the last window added. */
  lastCount: number;
}

const emptyQuiet = (): QuietTally => ({ ttfe: [], failures: {}, completed: 0, wallMs: 0, lastCount: 0 });
const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);

function addQuiet(
  tally: QuietTally,
  window: { ttfe: number[]; failures: Record<string, number>; completed: number; wallMs: number },
): void {
  tally.ttfe.push(...window.ttfe);
  tally.lastCount = window.ttfe.length;
  for (const [why, n] of Object.entries(window.failures)) tally.failures[why] = (tally.failures[why] ?? 0) + n;
  tally.completed += window.completed;
  tally.wallMs += window.wallMs;
}

function quietOf(t: QuietTally): QuietTenant {
  const ttfe = sorted(t.ttfe);
  return {
    runs: t.completed + Object.values(t.failures).reduce((s, n) => s + n, 0),
    failures: t.failures,
    runsPerSecond: (t.completed / t.wallMs) * 1000,
    ttfeP50: percentile(ttfe, 0.5),
    ttfeP99: percentile(ttfe, 0.99),
  };
}

async function createConversation(url: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${url}/conversations`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: "{}",
  });
  const json = (await res.json()) as { id?: string };
  if (!res.ok || !json.id) throw new Error(`POST /conversations: ${res.status} ${JSON.stringify(json)}`);
  return json.id;
}
