import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { closeSubjects } from "../lib/close-subjects.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { isEvent, readSse } from "../../test/support/helpers/sse-client.js";
import { createBenchDatabase, type BenchDatabase } from "../lib/bench-database.js";
import { summarize, type Stats } from "../lib/measure.js";
import { startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

const STDIO_SERVER = path.resolve(import.meta.dirname, "../../test/support/mcp/stdio-server.mjs");

export type SandboxKind = "none" | "bwrap";
export type SandboxedTool = "run_command" | "mcp stdio";

/** One tool under one sandbox: ms per tool step of the run, and the call's own time as loopd recorded it. */
export interface SandboxStepRow {
  tool: SandboxedTool;
  sandbox: SandboxKind;
  /** ms per tool step (run_command: the approval's round trip included). */
  step: Stats;
  /** The tool call's own `duration_ms` (its `tool_call.completed` event). */
  call: Stats;
}

/**
 * sandbox: What the tool sandbox costs a step: two loopd processes, one with
 * TOOL_SANDBOX=bwrap and one with TOOL_SANDBOX=none, on databases of their
 * own, each running the same runs interleaved. A run_command run of `steps`
 * calls of `true`, each approved by the client (run_command always asks a
 * person: the answer's POST returns at the next pause), and a run of
 * `steps` calls to the echo tool of the test MCP server over stdio (its
 * child, confined or not, started once per process; `approval: "never"`).
 */
export async function measureSandboxStepCost({
  serverUrl,
  runs,
  steps,
  logLevel,
}: {
  serverUrl: string | undefined;
  runs: number;
  steps: number;
  logLevel: string;
}): Promise<SandboxStepRow[]> {
  const llm = await startFakeLlm();
  let tool: { name: string; input: Record<string, unknown> } = { name: "run_command", input: { command: "true" } };
  llm.respond = (req) => {
    llm.requests.length = 0;
    const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
    return results < steps ? { toolCalls: [tool] } : { text: "Done." };
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-sandbox-"));
  const kinds: SandboxKind[] = ["none", "bwrap"];
  const databases: BenchDatabase[] = [];
  const subjects: Array<{ sandbox: SandboxKind; process: LoopdProcess }> = [];
  try {
    for (const sandbox of kinds) {
      // Each its own workspace and MCP folder: the sandbox binds them writable.
      const workspace = path.join(dir, sandbox, "workspace");
      const mcpFolder = path.join(dir, sandbox, "mcp");
      mkdirSync(workspace, { recursive: true });
      mkdirSync(mcpFolder, { recursive: true });
      const toolsFile = path.join(dir, sandbox, "tools.json");
      writeFileSync(
        toolsFile,
        JSON.stringify({
          mcp: [
            {
              name: "s",
              command: process.execPath,
              args: [STDIO_SERVER],
              cwd: mcpFolder,
              approval: "never",
              tools: ["echo"],
            },
          ],
        }),
      );
      const database = await createBenchDatabase(serverUrl);
      databases.push(database);
      const env = {
        ...database.env,
        ...openAiOnFakeLlm(llm.url),
        LOG_LEVEL: logLevel,
        WORKSPACE_DIR: workspace,
        TOOLS_FILE: toolsFile,
        ENABLE_RUN_COMMAND: "true",
        TOOL_SANDBOX: sandbox,
      };
      subjects.push({ sandbox, process: await startLoopdProcess({ env }) });
    }
    const cases: Array<{ tool: SandboxedTool; call: typeof tool }> = [
      { tool: "run_command", call: { name: "run_command", input: { command: "true" } } },
      { tool: "mcp stdio", call: { name: "s__echo", input: { text: "x" } } },
    ];
    const samples = subjects.flatMap(({ sandbox }) =>
      cases.map((c) => ({ tool: c.tool, sandbox, step: [] as number[], call: [] as number[] })),
    );
    const warmup = 2;
    for (let i = 0; i < runs + warmup; i++) {
      // Interleaved, so a busier moment of the machine falls on both alike.
      for (const [c, { tool: name, call }] of cases.entries()) {
        for (const [s, { process: p }] of subjects.entries()) {
          tool = call;
          const { msPerStep, durations } = await timeRun(p.url, [call.name], steps);
          if (i < warmup) continue;
          const sample = samples[s * cases.length + c]!;
          if (sample.tool !== name) throw new Error("samples out of order");
          sample.step.push(msPerStep);
          sample.call.push(...durations);
        }
      }
    }
    return samples.map((s) => ({
      tool: s.tool,
      sandbox: s.sandbox,
      step: summarize(s.step, 1),
      call: summarize(s.call, 1),
    }));
  } finally {
    await closeSubjects({ llm, processes: subjects.map((s) => s.process), databases, dir });
  }
}

/** One run of `steps` tool steps, every pause approved at once; ms per step, and each call's `duration_ms` from the run's events. */
async function timeRun(
  url: string,
  tools: string[],
  steps: number,
): Promise<{ msPerStep: number; durations: number[] }> {
  const conv = (await post(url, "/conversations", { tools })).id as string;
  const t0 = performance.now();
  let { run } = await post(url, `/conversations/${conv}/messages`, { content: "Go.", max_steps: steps + 2 });
  while (run.status === "requires_action") {
    const approvals = (run.required_action.tool_calls as { tool_call_id: string }[]).map((c) => ({
      tool_call_id: c.tool_call_id,
      approve: true,
    }));
    ({ run } = await post(url, `/conversations/${conv}/runs/${run.id}/actions`, { approvals }));
  }
  const msPerStep = (performance.now() - t0) / steps;
  if (run.status !== "completed" || run.steps !== steps + 1)
    throw new Error(`run ended ${run.status} after ${run.steps} steps: ${JSON.stringify(run.error)}`);
  const durations: number[] = [];
  const res = await fetch(`${url}/conversations/${conv}/runs/${run.id}/events`);
  for await (const item of readSse(res)) {
    if (!isEvent(item)) continue;
    if (item.event === "tool_call.completed") durations.push(item.data.duration_ms as number);
  }
  if (durations.length !== steps)
    throw new Error(`expected ${steps} tool_call.completed events, read ${durations.length}`);
  return { msPerStep, durations };
}

async function post(url: string, at: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${at}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
