import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../../src/store/db.js";
import { LOCK_FILE } from "../../../src/store/data-dir-lock.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** An embedded database folder, migrated once for the whole run; each test file's database starts as a copy of it. */
    pgliteTemplate: string | null;
  }
}

/**
 * vitest's global setup: on PGlite, makes and migrates one embedded database
 * before any test file runs. Creating one costs about 2 s of WebAssembly
 * `initdb` (on a busy machine, 5); a copy of this folder opens in a quarter
 * of that, and the suite opens a hundred and more. The migrations still run
 * from nothing here, once per run, and test/store/migrate.test.ts tests them.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide("pgliteTemplate", null);
    return () => {};
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-pglite-template-"));
  const database = await openDatabase({ dataDir });
  await database.migrate();
  await database.close();
  project.provide("pgliteTemplate", dataDir);
  return () => rmSync(dataDir, { recursive: true, force: true });
}

/** A copy of the template into `dataDir` (empty), without its lock file: the copy is a database no one has opened. */
export function copyTemplate(template: string, dataDir: string): void {
  cpSync(template, dataDir, { recursive: true, filter: (source) => path.basename(source) !== LOCK_FILE });
}
