import { afterAll, beforeAll, beforeEach } from "vitest";
import type { Logger } from "pino";
import { openDatabase, type Database } from "../../../src/store/db.js";
import type { Tool } from "../../../src/tools/define-tool.js";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server.js";
import { captureLogs } from "./log-sink.js";
import { startPgbouncer, type Pgbouncer } from "./pgbouncer.js";
import { startLoopd, type TestLoopd } from "./start-loopd.js";
import { admin } from "./test-database.js";

/**
 * The machine's Postgres, whichever database the rest of the suite uses: these
 * tests are about a server shared by instances behind a pooler, which the
 * embedded database cannot be.
 */
export const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface PooledInstance {
  database: Database;
  loopd: TestLoopd;
  /** What this instance logged (JSON lines, level info and up). */
  logs: any[];
}

export interface PooledFixture {
  llm: FakeLlm;
  bouncer: Pgbouncer;
  /** The test file's database through pgbouncer (transaction mode): every instance's `DATABASE_URL`. */
  url: string;
  /** The same database directly: `DATABASE_DIRECT_URL` when `direct` is on. */
  directUrl: string;
  instances: PooledInstance[];
  /** Starts one more instance on the database (closed with the others). */
  add(instanceId: string): Promise<PooledInstance>;
}

/**
 * `count` loopd instances on one database of the file's own, every one
 * behind one pgbouncer in transaction mode, with `DATABASE_DIRECT_URL`
 * (for LISTEN and migrations) when `direct` is on, else without (LISTEN is
 * then not delivered: loopd polls).
 */
export function usePooledLoopd({
  count = 2,
  direct = true,
  env = {},
  tools,
}: {
  count?: number;
  direct?: boolean;
  env?: Record<string, string>;
  tools?: Tool[];
}): PooledFixture {
  const f = { instances: [] as PooledInstance[] } as PooledFixture;
  const name = `loopd_scale_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let created = false;
  f.add = async (instanceId) => {
    const database = await openDatabase({
      databaseUrl: f.url,
      ...(direct && { directUrl: f.directUrl }),
      poolSize: 4,
      listenProbeMs: 1_000,
    });
    await database.migrate();
    const { logger, lines } = captureLogs("info");
    const loopd = await startLoopd({
      database,
      llm: f.llm,
      env,
      instanceId,
      logger: logger as Logger,
      ...(tools && { tools }),
    });
    const instance = { database, loopd, logs: lines };
    f.instances.push(instance);
    return instance;
  };
  beforeAll(async () => {
    f.llm = await startFakeLlm();
    await admin(SERVER_URL, `create database ${name}`);
    created = true;
    const direct = new URL(SERVER_URL);
    direct.pathname = `/${name}`;
    f.directUrl = direct.toString();
    f.bouncer = await startPgbouncer(SERVER_URL);
    f.url = f.bouncer.urlOf(f.directUrl);
    for (let i = 0; i < count; i++) await f.add(`instance-${String.fromCharCode(97 + i)}`);
  });
  afterAll(async () => {
    for (const { loopd, database } of f.instances) {
      await loopd.close().catch(() => {});
      await database.close().catch(() => {});
    }
    await f.bouncer?.close();
    if (created) await admin(SERVER_URL, `drop database if exists ${name} with (force)`);
    await f.llm?.close();
  });
  beforeEach(() => f.llm.reset());
  return f;
}
