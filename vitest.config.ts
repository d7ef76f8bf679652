import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites share one machine-wide Postgres database when TEST_DATABASE_URL is
    // set; each test file creates its own schema, so files may run in parallel.
    pool: "forks",
  },
});
