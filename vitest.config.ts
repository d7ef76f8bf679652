import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { databaseFreeTestFiles } from "./test/support/helpers/database-free-files.js";

/**
 * With TEST_DATABASE_POOLER=pgbouncer (and TEST_DATABASE_URL), the suite's
 * third database kind: Postgres behind pgbouncer in transaction mode. Only
 * what a pooler can change runs there — many instances on one database,
 * queues, leases and takeovers, cancels and approvals from another instance,
 * the shared rate limit, webhooks — and test/scale, which starts poolers of
 * its own and runs only there.
 */
const behindPooler = process.env.TEST_DATABASE_POOLER === "pgbouncer";
/**
 * With TEST_DATABASE_URL alone, the Postgres pass: the files that never reach the
 * choice of database (pure functions, the fake LLM, processes on a DATA_DIR of
 * their own) ran the same in the PGlite pass, so they are not run again.
 */
const onPostgres = Boolean(process.env.TEST_DATABASE_URL) && !behindPooler;
const POOLED = [
  "test/scale/**/*.test.ts",
  "test/runs/{keep-leases,recover-run.takeover,run-cap.instances,run-cap.concurrent-starts,history-cache.instances,follow-run-events.followers,follow-run-events.streaming,run-signals.lost-lease,retention-sweeper}.test.ts",
  "test/conversations/{answer-action.instances-and-deletes,answer-action.races,send-message.on-busy,send-message.on-busy-storm}.test.ts",
  "test/e2e/{queue-instances,webhook-restart}.test.ts",
  "test/http/rate-limit-refused.test.ts",
  "test/webhooks/webhook-worker.end-to-end.test.ts",
  "test/store/broadcast.test.ts",
];

export default defineConfig({
  test: {
    include: behindPooler ? POOLED : ["test/**/*.test.ts"],
    exclude: behindPooler
      ? []
      : [
          "test/scale/**",
          "**/node_modules/**",
          ...(onPostgres ? databaseFreeTestFiles(fileURLToPath(new URL(".", import.meta.url))) : []),
        ],
    // On PGlite, one migrated database that each test file's database starts as a copy of; behind
    // pgbouncer, the run's pooler. And src/ built into dist/ once, so that programs started as processes run compiled.
    globalSetup: [
      "test/support/helpers/pglite-template.ts",
      "test/support/helpers/pgbouncer-setup.ts",
      "test/support/helpers/build-server.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one machine-wide Postgres database when TEST_DATABASE_URL is
    // set; each test file creates its own schema, so files may run in parallel.
    pool: "forks",
    // A worker runs file after file on the modules it has loaded: importing loopd (about 1,800
    // modules) took each file 3-4 s, a third of the suite's time. Each file makes and closes what
    // it uses (its database, apps, servers, processes); test/server/closed-app-collected.test.ts
    // holds a closed app to that, since a worker's memory would otherwise grow file by file.
    isolate: false,
    // Most test files wait on sockets, child processes and timers, not the CPU: three at a
    // time on two cores take the suite from about 11 to 8 minutes on PGlite (5 on Postgres).
    maxWorkers: 3,
  },
});
