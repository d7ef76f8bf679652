import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { killAllLoopd, spawnLoopd } from "./loopd-process.js";
import { runProgram } from "./run-program.js";

// Real processes, each compiling the sources at start: bounds, not measures.
vi.setConfig({ testTimeout: 120_000 });

/*
 * loopd where no sandbox can be made: a PATH with neither bwrap nor
 * util-linux's unshare (for TOOL_RUN_AS_USER as root). With run_command on
 * it refuses to start, saying why and what to set, unless TOOL_SANDBOX=none
 * says commands may run unconfined.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-sandbox-start-"));
const NO_TOOLS_PATH = path.join(scratch, "empty-bin");
const start = (env: Record<string, string>) =>
  runProgram("src/main.ts", {
    env: { DATA_DIR: path.join(scratch, "data"), PORT: "0", PATH: NO_TOOLS_PATH, ...env },
    timeoutMs: 60_000,
  });

afterAll(killAllLoopd);

test("with run_command on and no sandbox possible, loopd refuses to start, naming the fix", async () => {
  const { code, output } = await start({ ENABLE_RUN_COMMAND: "true" });
  expect(code).toBe(1);
  expect(output).toMatch(
    /^loopd cannot start: ENABLE_RUN_COMMAND=true, but commands cannot be confined here: bubblewrap \(bwrap\) is missing .*set TOOL_SANDBOX=none/m,
  );
});

test("TOOL_SANDBOX=bwrap where bwrap cannot run refuses to start, run_command on or off", async () => {
  const { code, output } = await start({ TOOL_SANDBOX: "bwrap" });
  expect(code).toBe(1);
  expect(output).toMatch(/^loopd cannot start: TOOL_SANDBOX=bwrap, but bubblewrap cannot run here/m);
});

test("TOOL_SANDBOX=none starts it anyway", async () => {
  const loopd = await spawnLoopd({
    env: {
      DATA_DIR: path.join(scratch, "data-none"),
      PATH: NO_TOOLS_PATH,
      ENABLE_RUN_COMMAND: "true",
      TOOL_SANDBOX: "none",
    },
  });
  const tools = (await (await fetch(`${loopd.url}/tools`)).json()) as { data: { name: string }[] };
  expect(tools.data.map((t) => t.name)).toContain("run_command");
});
