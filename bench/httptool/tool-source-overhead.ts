import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { startHttpMcpServer } from "../../test/support/mcp/http-mcp-server.js";
import { summarize, type Stats } from "../lib/measure.js";
import { startLoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

const STDIO_SERVER = path.resolve(import.meta.dirname, "../../test/support/mcp/stdio-server.mjs");
/** How long each of the 8 calls of the parallel/sequential step waits on the server (its I/O). */
export const PARALLEL_CALL_MS = 20;
export const PARALLEL_CALLS = 8;

/** One tool source: ms per tool step in loopd, and ms of the same call made directly from the bench process. */
export interface ToolSourceRow {
  source: "builtin" | "http" | "mcp stdio" | "mcp http";
  step: Stats;
  /** null for the built-in (nothing to call). */
  direct: Stats | null;
}

export interface ToolSourceOverhead {
  steps: number;
  rows: ToolSourceRow[];
  /** ms of one step holding 8 calls of 20 ms each to an MCP tool: read-only (run at once), and not (one after another). */
  parallel: Stats;
  sequential: Stats;
}

/**
 * httptool: What a tool costs per call by where it comes from: the same
 * tool-calling run (`steps` tool steps, then an answer) with the built-in
 * `calculate`, an HTTP tool (TOOLS_FILE, signed, read-only), and the echo
 * tool of the test MCP server over stdio (loopd's child) and over
 * Streamable HTTP (in this process), interleaved run by run. Direct: the
 * same call made from this process (a POST; the SDK's client over its own
 * stdio child, and over HTTP to the same server), so that the step's extra
 * time less the direct call is loopd's own work per call. Then one step of
 * 8 calls of 20 ms each to an MCP tool that is read-only (run together)
 * against one that is not (run one after another).
 */
export async function measureToolSourceOverhead({
  databaseEnv,
  runs,
  steps,
  logLevel,
}: {
  databaseEnv: Record<string, string>;
  runs: number;
  steps: number;
  logLevel: string;
}): Promise<ToolSourceOverhead> {
  const receiver = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const { input } = JSON.parse(body) as { input: { expression: string } };
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ output: String(Number(input.expression.split("+")[0]) + 1) }));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/add`;
  const mcpHttp = await startHttpMcpServer();
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-tools-"));
  const toolsFile = path.join(dir, "tools.json");
  const secret = `whsec_${Buffer.from("loopd-bench-secret-0123456789").toString("base64")}`;
  writeFileSync(
    toolsFile,
    JSON.stringify({
      http: [
        {
          name: "add_http",
          description: "Adds one.",
          input_schema: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
          url,
          secret,
          read_only: true,
        },
      ],
      mcp: [
        { name: "s", command: process.execPath, args: [STDIO_SERVER], tools: ["echo", "slow_read", "safe_write"] },
        { name: "h", url: mcpHttp.url, tools: ["echo"] },
      ],
    }),
  );
  const llm = await startFakeLlm();
  const loopd = await startLoopdProcess({
    env: {
      ...databaseEnv,
      ...openAiOnFakeLlm(llm.url),
      LOG_LEVEL: logLevel,
      WORKSPACE_DIR: dir,
      TOOLS_FILE: toolsFile,
    },
  });
  const direct = {
    stdio: new Client({ name: "bench", version: "1" }),
    http: new Client({ name: "bench", version: "1" }),
  };
  await direct.stdio.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER] }));
  await direct.http.connect(new StreamableHTTPClientTransport(new URL(mcpHttp.url)));

  let calls: (results: number) => { name: string; input: Record<string, unknown> }[] = () => [];
  llm.respond = (req) => {
    const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
    const next = calls(results);
    return next.length > 0 ? { toolCalls: next } : { text: "Done." };
  };
  const post = async (at: string, body: unknown) => {
    const res = await fetch(`${loopd.url}${at}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  /** ms per tool step of a run whose steps each call `perStep` tools. */
  const timeRun = async (
    tools: string[],
    stepCount: number,
    perStep: (i: number) => { name: string; input: Record<string, unknown> }[],
  ) => {
    calls = (results) => (results < stepCount * perStep(0).length ? perStep(results) : []);
    const conv = (await post("/conversations", { tools })).id as string;
    const t0 = performance.now();
    const { run } = await post(`/conversations/${conv}/messages`, { content: "Count.", max_steps: stepCount + 2 });
    if (run.status !== "completed" || run.steps !== stepCount + 1)
      throw new Error(`run ended ${run.status} after ${run.steps} steps: ${JSON.stringify(run.error)}`);
    return (performance.now() - t0) / stepCount;
  };
  const one = (name: string, input: (i: number) => Record<string, unknown>) => (i: number) => [
    { name, input: input(i) },
  ];
  const subjects: {
    source: ToolSourceRow["source"];
    tool: string;
    input: (i: number) => Record<string, unknown>;
    direct: (() => Promise<unknown>) | null;
  }[] = [
    { source: "builtin", tool: "calculate", input: (i) => ({ expression: `${i}+1` }), direct: null },
    {
      source: "http",
      tool: "add_http",
      input: (i) => ({ expression: `${i}+1` }),
      direct: async () => {
        const body = JSON.stringify({
          tool_call_id: "call_bench",
          name: "add_http",
          input: { expression: "1+1" },
          conversation_id: "conv_bench",
          run_id: "run_bench",
        });
        await (
          await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": "call_bench" },
            body,
          })
        ).text();
      },
    },
    {
      source: "mcp stdio",
      tool: "s__echo",
      input: (i) => ({ text: `${i}+1` }),
      direct: () => direct.stdio.callTool({ name: "echo", arguments: { text: "1+1" } }),
    },
    {
      source: "mcp http",
      tool: "h__echo",
      input: (i) => ({ text: `${i}+1` }),
      direct: () => direct.http.callTool({ name: "echo", arguments: { text: "1+1" } }),
    },
  ];
  const timed = async (work: () => Promise<unknown>) => {
    const t0 = performance.now();
    await work();
    return performance.now() - t0;
  };
  const eight = (name: string, input: Record<string, unknown>) => () =>
    Array.from({ length: PARALLEL_CALLS }, () => ({ name, input }));
  try {
    const samples = subjects.map(() => ({ step: [] as number[], direct: [] as number[] }));
    const parallel: number[] = [];
    const sequential: number[] = [];
    const warmup = 3;
    for (let i = 0; i < runs + warmup; i++) {
      for (const [k, subject] of subjects.entries()) {
        const step = await timeRun([subject.tool], steps, one(subject.tool, subject.input));
        const call = subject.direct ? await timed(subject.direct) : 0;
        if (i >= warmup) {
          samples[k]!.step.push(step);
          samples[k]!.direct.push(call);
        }
      }
      const p = await timeRun(["s__slow_read"], 1, eight("s__slow_read", { ms: PARALLEL_CALL_MS }));
      const q = await timeRun(["s__safe_write"], 1, eight("s__safe_write", { note: "n", ms: PARALLEL_CALL_MS }));
      if (i >= warmup) {
        parallel.push(p);
        sequential.push(q);
      }
    }
    return {
      steps,
      rows: subjects.map((s, k) => ({
        source: s.source,
        step: summarize(samples[k]!.step, 1),
        direct: s.direct ? summarize(samples[k]!.direct, 1) : null,
      })),
      parallel: summarize(parallel, 1),
      sequential: summarize(sequential, 1),
    };
  } finally {
    llm.respond = null;
    await direct.stdio.close().catch(() => {});
    await direct.http.close().catch(() => {});
    await loopd.stop();
    await llm.close();
    await mcpHttp.close();
    await new Promise((resolve) => receiver.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
