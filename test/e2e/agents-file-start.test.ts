import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { runProgram } from "./run-program.js";

vi.setConfig({ testTimeout: 150_000 });

/*
 * A bad AGENTS_FILE stops a real start with one line: the file, the entry
 * and the field, whether the file's shape is wrong or an entry names what
 * the server does not have.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-agents-file-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const startWith = async (name: string, text: string) => {
  const file = path.join(scratch, name);
  writeFileSync(file, text);
  const run = await runProgram("src/main.ts", {
    env: { DATA_DIR: path.join(scratch, `data-${name}`), PORT: "0", AGENTS_FILE: file },
    timeoutMs: 60_000,
  });
  return { ...run, file };
};

test("an entry with a bad name: the start is refused, naming the file, the entry and the field", async () => {
  const { code, output, file } = await startWith(
    "agents.yaml",
    ["agents:", "  - name: support", "    system: Be brief.", "  - name: Bad Name", "    tools: [calculate]", ""].join(
      "\n",
    ),
  );
  expect(code).toBe(1);
  expect(output.trim().split("\n")).toHaveLength(1);
  expect(output).toMatch(
    new RegExp(
      `^loopd cannot start: AGENTS_FILE ${file.replaceAll(/[.\\]/g, "\\$&")}: agents\\[1\\]\\.name: must be 1–48`,
    ),
  );
});

test("an entry naming a tool the server does not have: refused the same way, once the tools are known", async () => {
  const { code, output, file } = await startWith(
    "agents.json",
    JSON.stringify({ agents: [{ name: "ok" }, { name: "helper", tools: ["calculate", "no_such_tool"] }] }),
  );
  expect(code).toBe(1);
  expect(output.trim().split("\n")).toHaveLength(1);
  expect(output).toContain(`loopd cannot start: AGENTS_FILE ${file}: agents[1].tools: unknown tool "no_such_tool"`);
});
