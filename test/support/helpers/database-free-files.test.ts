import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { databaseFreeTestFiles } from "./database-free-files.js";

const root = mkdtempSync(path.join(tmpdir(), "loopd-database-free-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(name: string, text: string): void {
  const file = path.join(root, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe("databaseFreeTestFiles: which test files the Postgres pass leaves to the PGlite pass", () => {
  it("keeps every file that reaches the database choice, however it imports it, and only those", () => {
    write("test/support/db.ts", "export const url = process.env.TEST_DATABASE_URL;\n");
    write("test/support/via.ts", 'import { url } from "./db.js";\nexport { url };\n');
    write("test/support/pure.ts", 'import { other } from "./cycle.js";\nexport const pure = 1;\n');
    write("test/support/cycle.ts", 'import { pure } from "./pure.js";\nexport const other = pure;\n');
    write("test/a/direct.test.ts", 'it("reads", () => process.env.TEST_DATABASE_URL);\n');
    write("test/a/deep.test.ts", 'import { url } from "../support/via.js";\n');
    write("test/a/dynamic.test.ts", 'const m = await import("../support/via.js");\n');
    write("test/a/side-effect.test.ts", 'import "../support/db.js";\n');
    write(
      "test/a/cycle-then-db.test.ts",
      'import "../support/cycle.js";\nimport type { url } from "../support/db.js";\n',
    );
    write("test/b/pure.test.ts", 'import { pure } from "../support/pure.js";\nimport { z } from "zod";\n');
    write("test/b/alone.test.ts", 'it("adds", () => 1 + 1);\n');
    write("test/b/missing-import.test.ts", 'import { gone } from "./nowhere.js";\n');

    expect(databaseFreeTestFiles(root)).toEqual([
      "test/b/alone.test.ts",
      "test/b/missing-import.test.ts",
      "test/b/pure.test.ts",
    ]);
  });

  it("on this repository: the harness that chooses the database is never skipped, a pure unit test is", () => {
    const free = databaseFreeTestFiles(path.resolve(import.meta.dirname, "../../.."));
    expect(free).toContain("test/agent/decide-turn.test.ts");
    expect(free).not.toContain("test/e2e/crash-recovery.test.ts");
    expect(free).not.toContain("test/conversations/send-message.admission.test.ts");
    expect(free.length).toBeGreaterThan(0);
  });
});
