/**
 * What the tool sandbox costs a run_command call: the same commands through
 * run_command unconfined (TOOL_SANDBOX=none) and under bwrap, one after the
 * other in one process, median and p90 of each. A stdio MCP server pays the
 * sandbox once, when it starts; its calls go over the same pipes.
 *   node --import tsx bench/sandbox/tool-sandbox-cost.ts [calls per case, default 15]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRunCommandTool } from "../../src/tools/command/run-command.js";
import { createBwrapSandbox } from "../../src/tools/sandbox/bwrap-sandbox.js";
import { NO_SANDBOX, type ToolSandbox } from "../../src/tools/sandbox/tool-sandbox.js";

const calls = Number(process.argv[2] ?? 15);
const workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-bench-ws-"));
const ctx = {
  signal: new AbortController().signal,
  workspaceDir,
  maxResultChars: 20_000,
  toolCallId: "call_bench",
  conversationId: null,
  runId: null,
};
const sandboxes: [string, ToolSandbox][] = [
  ["none", NO_SANDBOX],
  ["bwrap", createBwrapSandbox({ hidden: [], home: process.env.HOME })],
];
const commands: [string, string][] = [
  ["true", "true"],
  ["node -e 0", `"${process.execPath}" -e 0`],
];
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

for (const [label, command] of commands) {
  for (const [name, sandbox] of sandboxes) {
    const tool = createRunCommandTool({
      timeoutMs: 30_000,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      sandbox,
    });
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await tool.execute(tool.input.parse({ command }), ctx);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${label.padEnd(10)} ${name.padEnd(6)} median ${at(times, 0.5).toFixed(1)} ms  p90 ${at(times, 0.9).toFixed(1)} ms`,
    );
  }
}
