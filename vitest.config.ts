import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // On PGlite, one migrated database that each test file's database starts as a copy of.
    // And src/ built into dist/ once, so that programs started as processes run compiled.
    globalSetup: ["test/support/helpers/pglite-template.ts", "test/support/helpers/build-server.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one machine-wide Postgres database when TEST_DATABASE_URL is
    // set; each test file creates its own schema, so files may run in parallel.
    pool: "forks",
    // Most test files wait on sockets, child processes and timers, not the CPU: three at a
    // time on two cores take the suite from about 11 to 8 minutes on PGlite (5 on Postgres).
    maxWorkers: 3,
  },
});
