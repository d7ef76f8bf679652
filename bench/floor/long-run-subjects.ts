import { createBenchDatabase, type BenchDatabase } from "../lib/bench-database.js";
import type { FloorRequest } from "../lib/floor-loop.js";
import { LONG_RUN_PROMPT } from "./long-run-scenario.js";
import { loopdClient } from "../lib/loopd-client.js";
import { startPgWireCounter, type PgWireCounter } from "../lib/pg-wire-counter.js";
import { startFloorProcess } from "./start-floor-process.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

export type SubjectName = "floor" | "loopd" | "loopd before" | "loopd TRACE=off";

/** Something that runs the long-run scenario in a process of its own, against a database of its own. */
export interface LongRunSubject {
  name: SubjectName;
  pid: number;
  database: BenchDatabase;
  /** The relay its Postgres connections go through; null on PGlite. */
  wire: PgWireCounter | null;
  /** Its HTTP address, for a loopd. */
  url?: string;
  /**
   * Readies `runs` conversations of `steps` tool steps outside the measured
   * window; the returned work runs them one after the other and resolves
   * with the model calls made.
   */
  prepare(input: { runs: number; steps: number }): Promise<() => Promise<number>>;
  stop(): Promise<void>;
}

/** A fresh database for one subject, and on Postgres the counting relay in front of it. */
async function databaseFor(
  serverUrl: string | undefined,
): Promise<{ database: BenchDatabase; wire: PgWireCounter | null; url: string | undefined }> {
  const database = await createBenchDatabase(serverUrl);
  const wire = database.open.databaseUrl ? await startPgWireCounter(database.open.databaseUrl) : null;
  return { database, wire, url: wire?.url };
}

async function release(database: BenchDatabase, wire: PgWireCounter | null): Promise<void> {
  await wire?.close();
  await database.drop();
}

export async function startLoopdSubject({
  name,
  checkout,
  serverUrl,
  env,
}: {
  name: SubjectName;
  /** @default this checkout */
  checkout?: string;
  serverUrl: string | undefined;
  env: Record<string, string>;
}): Promise<LongRunSubject> {
  const { database, wire, url } = await databaseFor(serverUrl);
  const databaseEnv = url ? { DATABASE_URL: url } : database.env;
  const loopd = await startLoopdProcess({ env: { ...env, ...databaseEnv }, ...(checkout && { checkout }) });
  const client = loopdClient(loopd.url);
  return {
    name,
    pid: loopd.pid,
    database,
    wire,
    url: loopd.url,
    async prepare({ runs, steps }) {
      const conversations: string[] = [];
      for (let i = 0; i < runs; i++) conversations.push(await client.createConversation());
      return async () => {
        let calls = 0;
        for (const id of conversations)
          calls += (await client.send(id, LONG_RUN_PROMPT, { maxSteps: steps + 2 })).run.steps as number;
        return calls;
      };
    },
    async stop() {
      await loopd.stop();
      await release(database, wire);
    },
  };
}

export async function startFloorSubject({
  serverUrl,
  llmUrl,
  workspaceDir,
  request,
}: {
  serverUrl: string | undefined;
  llmUrl: string;
  workspaceDir: string;
  request: FloorRequest;
}): Promise<LongRunSubject> {
  const { database, wire, url } = await databaseFor(serverUrl);
  const floor = await startFloorProcess({ llmUrl, database: url ? { databaseUrl: url } : database.open, workspaceDir });
  let conversationsRun = 0;
  return {
    name: "floor",
    pid: floor.pid,
    database,
    wire,
    async prepare({ runs }) {
      const conversationIds = Array.from({ length: runs }, () => `floor-${++conversationsRun}`);
      return () => floor.run({ conversationIds, prompt: LONG_RUN_PROMPT, request });
    },
    async stop() {
      await floor.stop();
      await release(database, wire);
    },
  };
}
