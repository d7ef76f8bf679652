import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startFakeLlm } from "../test/fake-llm/server.js";
import { summarize, type Stats } from "./measure.js";
import { startLoopdProcess } from "./start-loopd-process.js";

export interface HttpToolOverheadRow {
  steps: number;
  /** ms per tool step of a run whose tool is the built-in `calculate`. */
  builtin: Stats;
  /** ms per tool step of the same run whose tool is an HTTP endpoint (TOOLS_FILE). */
  http: Stats;
  /** ms of one POST to that endpoint made directly, as loopd makes it (same body size, a fresh request each). */
  direct: Stats;
}

/**
 * (j) What an HTTP tool costs per call: the same tool-calling run (`steps`
 * tool steps, then an answer) with the built-in `calculate` and with an HTTP
 * tool answering the same output from a receiver in this process,
 * interleaved pair by pair; the difference against a direct POST to the
 * receiver is loopd's own work per HTTP call (the input checked against
 * its schema, the signature, the capped read).
 */
export async function measureHttpToolOverhead({ databaseEnv, runs, steps, logLevel }: { databaseEnv: Record<string, string>; runs: number; steps: number; logLevel: string }): Promise<HttpToolOverheadRow> {
  const receiver = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const { input } = JSON.parse(body) as { input: { expression: string } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ output: String(Number(input.expression.split("+")[0]) + 1) }));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/add`;
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-http-"));
  const toolsFile = path.join(dir, "tools.json");
  const secret = `whsec_${Buffer.from("loopd-bench-secret-0123456789").toString("base64")}`;
  writeFileSync(
    toolsFile,
    JSON.stringify({ http: [{ name: "add_http", description: "Adds one.", input_schema: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] }, url, secret, read_only: true }] }),
  );
  const llm = await startFakeLlm();
  const loopd = await startLoopdProcess({
    env: { ...databaseEnv, LLM_PROVIDER: "openai", OPENAI_API_KEY: "bench", OPENAI_BASE_URL: `${llm.url}/v1`, LOG_LEVEL: logLevel, WORKSPACE_DIR: dir, TOOLS_FILE: toolsFile },
  });
  let tool = "calculate";
  llm.respond = (req) => {
    const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
    return results < steps ? { toolCalls: [{ name: tool, input: { expression: `${results}+1` } }] } : { text: "Done." };
  };
  const post = async (at: string, body: unknown) => {
    const res = await fetch(`${loopd.url}${at}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const timeRun = async (name: string) => {
    tool = name;
    const conv = (await post("/conversations", { tools: [name] })).id as string;
    const t0 = performance.now();
    const { run } = await post(`/conversations/${conv}/messages`, { content: "Count.", max_steps: steps + 2 });
    if (run.status !== "completed" || run.steps !== steps + 1) throw new Error(`run ended ${run.status} after ${run.steps} steps`);
    return (performance.now() - t0) / steps;
  };
  const timeDirect = async () => {
    const body = JSON.stringify({ tool_call_id: "call_bench", name: "add_http", input: { expression: "1+1" }, conversation_id: "conv_bench", run_id: "run_bench" });
    const t0 = performance.now();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "call_bench" }, body });
    await res.text();
    return performance.now() - t0;
  };
  try {
    const builtin: number[] = [];
    const http: number[] = [];
    const direct: number[] = [];
    const warmup = 3;
    for (let i = 0; i < runs + warmup; i++) {
      const a = await timeRun("calculate");
      const b = await timeRun("add_http");
      const c = await timeDirect();
      if (i >= warmup) {
        builtin.push(a);
        http.push(b);
        direct.push(c);
      }
    }
    return { steps, builtin: summarize(builtin, 1), http: summarize(http, 1), direct: summarize(direct, 1) };
  } finally {
    llm.respond = null;
    await loopd.stop();
    await llm.close();
    await new Promise((resolve) => receiver.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
