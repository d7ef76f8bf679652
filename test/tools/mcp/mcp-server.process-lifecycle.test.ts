/** Closing loopd leaves no MCP process behind: not a worker a server started, not a server still in its handshake. Real stdio servers (test/support/mcp/hostile-stdio.mjs). */
import { existsSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { processesWith } from "../../support/helpers/processes-with.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const SERVER = path.resolve(import.meta.dirname, "../../support/mcp/hostile-stdio.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "loopd-mcp-"));
// The servers' folder: they run as TOOL_RUN_AS_USER when the tests run as root, and write their records here.
chmodSync(dir, 0o777);
const PIDS = path.join(dir, "pids.jsonl");
const pids = () =>
  existsSync(PIDS)
    ? readFileSync(PIDS, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; pid: number; server: string })
    : [];
/** The servers' processes and their workers, as this machine numbers them (a sandbox's own pids mean nothing here): those whose environment names PIDS. */
const running = () => processesWith(PIDS, { in: "environ" });

function toolsFile() {
  const file = path.join(dir, "tools.json");
  const stdio = (name: string, env: Record<string, string>) => ({
    name,
    command: "sh",
    args: ["-c", `SERVER_NAME=${name} exec "${process.execPath}" "${SERVER}"`],
    env: { PID_FILE: PIDS, ...env },
    cwd: dir,
  });
  writeFileSync(file, JSON.stringify({ mcp: [stdio("workers", { ORPHAN: "1" }), stdio("mute", { HANG_START: "1" })] }));
  return file;
}
const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile() } }));
afterAll(() => {
  for (const pid of running()) process.kill(pid, "SIGKILL");
});

test(
  "after loopd closes, no process of an MCP server's group is left: not a worker it started, not a server still in its handshake",
  {
    timeout: 90_000,
  },
  async () => {
    // Two Node servers starting in their sandboxes: on a loaded machine (CI's, with the suite's workers) that took over 15 s once.
    await vi.waitFor(
      async () => {
        const servers = (await f.loopd.app.inject({ method: "GET", url: "/tools/servers" })).json().data;
        expect(servers[0].status).toBe("ready");
        expect(pids().filter((p) => p.type === "server")).toHaveLength(2);
      },
      { timeout: 60_000, interval: 50 },
    );
    await f.loopd.close();
    // Killed processes take a moment to go: none may be left within a few seconds.
    await vi.waitFor(() => expect(running()).toEqual([]), { timeout: 10_000, interval: 50 });
  },
);
