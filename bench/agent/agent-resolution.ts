import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RecordedRequest } from "../../test/support/fake-llm/server.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { closeSubjects } from "../lib/close-subjects.js";
import { summarize, type Stats } from "../lib/measure.js";
import { cpuMsOf } from "../lib/proc-cpu.js";
import { startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

/** The two runs measured: one model call answered with text, and a tool round trip (the call, `calculate`, the answer). */
const SHAPES = { text: "Say hello.", tool: "Compute 6*7." } as const;
type Shape = keyof typeof SHAPES;

export interface AgentResolutionRow {
  shape: Shape;
  /** ms of one `POST …/messages` (the run, answered when it ends), on a conversation without an agent, then with one. */
  plain: Stats;
  agent: Stats;
  /** loopd's own CPU ms per run (the process, from /proc). */
  plainCpu: number;
  agentCpu: number;
}

/** The configuration both conversations run with: the agent's, and given directly to the plain one. */
const CONFIGURATION = {
  system: "You are a bench agent. Answer briefly.",
  tools: ["calculate", "get_current_time"],
  budget: { max_steps: 6 },
};

/**
 * agent: What an agent costs a run: one loopd process, each round a fresh
 * conversation started from an agent (`{"agent": "bench"}`) and a fresh one
 * given the same configuration directly, then the same run sent to each,
 * in turn (which goes first alternates), timed from the message's POST to
 * its answer, with the process's CPU over the request.
 */
export async function measureAgentResolution({
  serverUrl,
  rounds,
  logLevel,
}: {
  serverUrl: string | undefined;
  rounds: number;
  logLevel: string;
}): Promise<AgentResolutionRow[]> {
  const llm = await startFakeLlm();
  llm.respond = (req: RecordedRequest) => {
    const messages = req.body.messages as { role: string; content: unknown }[];
    const last = messages.at(-1)!;
    return last.role === "user" && JSON.stringify(last.content).includes(SHAPES.tool)
      ? { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }
      : { text: "Hello." };
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-agent-"));
  const database = await createBenchDatabase(serverUrl);
  const processes: LoopdProcess[] = [];
  try {
    const loopd = await startLoopdProcess({
      env: {
        ...database.env,
        ...openAiOnFakeLlm(llm.url),
        LOG_LEVEL: logLevel,
        WORKSPACE_DIR: dir,
      },
    });
    processes.push(loopd);
    await post(loopd.url, "/agents", { name: "bench", ...CONFIGURATION });
    const subjects = [{ agent: "bench" }, CONFIGURATION];
    const rows: AgentResolutionRow[] = [];
    for (const shape of Object.keys(SHAPES) as Shape[]) {
      const samples = subjects.map(() => ({ ms: [] as number[], cpu: 0 }));
      const warmup = 20;
      for (let i = 0; i < rounds + warmup; i++) {
        const ids = await Promise.all(
          subjects.map((fields) => post(loopd.url, "/conversations", fields).then((c) => c.id as string)),
        );
        // Interleaved, the order alternating, so a busier moment and a warmer cache fall on both alike.
        for (const s of i % 2 === 0 ? [0, 1] : [1, 0]) {
          const cpu0 = cpuMsOf(loopd.pid) ?? 0;
          const t0 = performance.now();
          const answer = await post(loopd.url, `/conversations/${ids[s]}/messages`, { content: SHAPES[shape] });
          const elapsed = performance.now() - t0;
          if ((answer.run as { status: string }).status !== "completed")
            throw new Error(`a ${shape} run ended ${JSON.stringify(answer.run)}`);
          if (i < warmup) continue;
          samples[s]!.ms.push(elapsed);
          samples[s]!.cpu += (cpuMsOf(loopd.pid) ?? 0) - cpu0;
        }
      }
      const [plain, agent] = [samples[1]!, samples[0]!];
      rows.push({
        shape,
        agent: summarize(agent.ms, 1),
        plain: summarize(plain.ms, 1),
        agentCpu: agent.cpu / rounds,
        plainCpu: plain.cpu / rounds,
      });
    }
    return rows;
  } finally {
    await closeSubjects({ llm, processes, databases: [database], dir });
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
