import type { TestProject } from "vitest/node";
import { startPgbouncer } from "./pgbouncer.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** With TEST_DATABASE_POOLER=pgbouncer, the port of the run's pgbouncer in front of TEST_DATABASE_URL's server. */
    pgbouncerPort: number | null;
  }
}

/**
 * vitest's global setup for the third kind of test database: Postgres behind
 * pgbouncer in transaction mode (what Supabase, Neon and RDS Proxy give),
 * one pooler for the whole run. Each test file's database is then reached
 * through it as `DATABASE_URL`, and directly as `DATABASE_DIRECT_URL`
 * (migrations, LISTEN), as docs/operations/scale.md tells operators to.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.TEST_DATABASE_POOLER !== "pgbouncer") {
    project.provide("pgbouncerPort", null);
    return async () => {};
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl)
    throw new Error("TEST_DATABASE_POOLER=pgbouncer needs TEST_DATABASE_URL: the server behind the pooler");
  const bouncer = await startPgbouncer(serverUrl, { poolSize: 10 });
  project.provide("pgbouncerPort", bouncer.port);
  return () => bouncer.close();
}
