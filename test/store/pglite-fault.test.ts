import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, expect, test, vi } from "vitest";
import { openDatabase, type Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";

const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-fault-"));
let database: Database | undefined;
let llm: FakeLlm | undefined;
let loopd: TestLoopd | undefined;
afterAll(async () => {
  await loopd?.close();
  await database?.close().catch(() => {});
  await llm?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** jsonb nested this deep traps PGlite's WebAssembly (memory access out of bounds); the HTTP edge refuses it long before. */
const tooDeepForPglite = '{"a":'.repeat(1500) + "1" + "}".repeat(1500);

test.skipIf(testDatabaseKind === "postgres")(
  "a WebAssembly fault inside PGlite is reported once to onFault, and requests after it are 503s, not 500s",
  async () => {
    const onFault = vi.fn();
    database = await openDatabase({ dataDir, onFault });
    await database.migrate();
    llm = await startFakeLlm();
    loopd = await startLoopd({ database, llm });
    expect((await loopd.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    expect(onFault).not.toHaveBeenCalled();

    await expect(database.db.execute(sql`select ${tooDeepForPglite}::jsonb`)).rejects.toMatchObject({
      cause: { name: "RuntimeError", message: "memory access out of bounds" },
    });
    expect(onFault).toHaveBeenCalledTimes(1);
    expect(onFault.mock.calls[0]![0]).toMatchObject({ name: "RuntimeError" });

    const ready = await loopd.app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().error.details).toEqual({ reason: "database" });
    const list = await loopd.app.inject({ method: "GET", url: "/conversations" });
    expect(list.statusCode).toBe(503);
    expect(list.json()).toEqual({ error: { code: "unavailable", message: expect.any(String), details: {} } });
    expect(onFault).toHaveBeenCalledTimes(1);
  },
);
