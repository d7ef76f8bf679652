import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { closeSubjects } from "../lib/close-subjects.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { summarize, type Stats } from "../lib/measure.js";
import { cpuMsOf } from "../lib/proc-cpu.js";
import { startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

export interface RequestChecksRow {
  subject: "loopd" | "before";
  /** ms of one `GET /conversations/:id`. */
  read: Stats;
  /** ms of one non-streaming `POST …/messages` answered with text (one model call). */
  message: Stats;
  /** loopd's own CPU ms per request, over the whole row (reads and messages together). */
  cpuPerRequest: number;
}

/**
 * checks: What the checks every request now goes through cost (the Host and
 * Origin checks, the body accounting, the message text limit, the ceilings
 * and the tenant's daily cost): this checkout against an older one
 * (`BENCH_BASELINE_DIR`), each its own process on a database of its own,
 * doing the same plain requests interleaved, a read and a one-call message.
 */
export async function measureRequestChecks({
  serverUrl,
  baselineDir,
  rounds,
  logLevel,
}: {
  serverUrl: string | undefined;
  baselineDir: string;
  rounds: number;
  logLevel: string;
}): Promise<RequestChecksRow[]> {
  const llm = await startFakeLlm();
  llm.respond = () => ({ text: "Hello." });
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-checks-"));
  const databases = [await createBenchDatabase(serverUrl), await createBenchDatabase(serverUrl)];
  const env = {
    ...openAiOnFakeLlm(llm.url),
    LOG_LEVEL: logLevel,
    WORKSPACE_DIR: dir,
  };
  const subjects: Array<{ subject: RequestChecksRow["subject"]; process: LoopdProcess }> = [];
  try {
    subjects.push({ subject: "loopd", process: await startLoopdProcess({ env: { ...databases[0]!.env, ...env } }) });
    subjects.push({
      subject: "before",
      process: await startLoopdProcess({ env: { ...databases[1]!.env, ...env }, checkout: baselineDir }),
    });
    const samples = subjects.map(() => ({ read: [] as number[], message: [] as number[], cpu: 0, requests: 0 }));
    const conversations = await Promise.all(
      subjects.map(({ process: p }) => post(p.url, "/conversations", { tools: [] }).then((c) => c.id as string)),
    );
    const warmup = 20;
    for (let i = 0; i < rounds + warmup; i++) {
      // Interleaved, so a busier moment of the machine falls on both alike.
      for (const [s, { process: p }] of subjects.entries()) {
        const conv = conversations[s]!;
        const cpu0 = cpuMsOf(p.pid) ?? 0;
        const t0 = performance.now();
        await get(p.url, `/conversations/${conv}`);
        const t1 = performance.now();
        await post(p.url, `/conversations/${conv}/messages`, { content: "Say hello." });
        const t2 = performance.now();
        if (i < warmup) continue;
        const sample = samples[s]!;
        sample.read.push(t1 - t0);
        sample.message.push(t2 - t1);
        sample.cpu += (cpuMsOf(p.pid) ?? 0) - cpu0;
        sample.requests += 2;
      }
    }
    return subjects.map(({ subject }, s) => {
      const sample = samples[s]!;
      return {
        subject,
        read: summarize(sample.read, 1),
        message: summarize(sample.message, 1),
        cpuPerRequest: sample.cpu / sample.requests,
      };
    });
  } finally {
    await closeSubjects({ llm, processes: subjects.map((s) => s.process), databases, dir });
  }
}

async function post(url: string, at: string, body: unknown) {
  const res = await fetch(`${url}${at}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function get(url: string, at: string) {
  const res = await fetch(`${url}${at}`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${at}: ${res.status}`);
}
