import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { summarize, type Stats } from "../lib/measure.js";
import { startLoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

export interface AuthOverhead {
  steps: number;
  /** ms per tool step of the same run, with keys off and with keys on (a key, its tenant's scoping, the rate limit). */
  stepOff: Stats;
  stepOn: Stats;
  /** ms of one `GET /conversations/:id`. */
  readOff: Stats;
  readOn: Stats;
}

/**
 * auth: What API keys cost: two loopd processes on databases of their own, one
 * with keys off (loopback, tenant `default`), one with keys on (the key
 * checked on every request, every query scoped by its tenant, the rate
 * limit counting), each doing the same 20-tool-step run and the same reads,
 * interleaved. The figures are per tool step and per request.
 */
export async function measureAuthOverhead({
  serverUrl,
  runs,
  steps,
  logLevel,
}: {
  serverUrl: string | undefined;
  runs: number;
  steps: number;
  logLevel: string;
}): Promise<AuthOverhead> {
  const llm = await startFakeLlm();
  llm.respond = (req) => {
    const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
    return results < steps
      ? { toolCalls: [{ name: "calculate", input: { expression: `${results}+1` } }] }
      : { text: "Done." };
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-auth-"));
  const adminToken = "bench-admin-token-0123456789";
  const [dbOff, dbOn] = [await createBenchDatabase(serverUrl), await createBenchDatabase(serverUrl)];
  const common = {
    ...openAiOnFakeLlm(llm.url),
    LOG_LEVEL: logLevel,
    WORKSPACE_DIR: dir,
    RATE_LIMIT_PER_MIN: "100000",
  };
  const off = await startLoopdProcess({ env: { ...dbOff.env, ...common, API_KEYS_REQUIRED: "false" } });
  const on = await startLoopdProcess({
    env: { ...dbOn.env, ...common, API_KEYS_REQUIRED: "true", ADMIN_TOKEN: adminToken },
  });
  try {
    const made = await fetch(`${on.url}/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ tenant: "bench" }),
    });
    const key = ((await made.json()) as { key: string }).key;
    const client = (url: string, headers: Record<string, string>) => ({
      async post(at: string, body: unknown) {
        const res = await fetch(`${url}${at}`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as any;
        if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      },
      async read(at: string) {
        const t0 = performance.now();
        const res = await fetch(`${url}${at}`, { headers });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`GET ${at}: ${res.status}`);
        return performance.now() - t0;
      },
    });
    const clients = { off: client(off.url, {}), on: client(on.url, { authorization: `Bearer ${key}` }) };
    const timeRun = async (c: typeof clients.off) => {
      const conv = (await c.post("/conversations", { tools: ["calculate"] })).id as string;
      const t0 = performance.now();
      const { run } = await c.post(`/conversations/${conv}/messages`, { content: "Count.", max_steps: steps + 2 });
      if (run.status !== "completed") throw new Error(`run ended ${run.status}`);
      const ms = (performance.now() - t0) / steps;
      let read = 0;
      for (let i = 0; i < 10; i++) read += await c.read(`/conversations/${conv}`);
      return { ms, read: read / 10 };
    };
    const samples = {
      stepOff: [] as number[],
      stepOn: [] as number[],
      readOff: [] as number[],
      readOn: [] as number[],
    };
    const warmup = 3;
    for (let i = 0; i < runs + warmup; i++) {
      const a = await timeRun(clients.off);
      const b = await timeRun(clients.on);
      if (i < warmup) continue;
      samples.stepOff.push(a.ms);
      samples.readOff.push(a.read);
      samples.stepOn.push(b.ms);
      samples.readOn.push(b.read);
    }
    return {
      steps,
      stepOff: summarize(samples.stepOff, 1),
      stepOn: summarize(samples.stepOn, 1),
      readOff: summarize(samples.readOff, 1),
      readOn: summarize(samples.readOn, 1),
    };
  } finally {
    llm.respond = null;
    await off.stop();
    await on.stop();
    await llm.close();
    await dbOff.drop();
    await dbOn.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
