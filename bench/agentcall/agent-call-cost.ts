import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { startLoopd } from "../../test/support/helpers/start-loopd.js";
import { openDatabase } from "../../src/store/db.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { percentile } from "../lib/measure.js";

const ANSWER = "Tokyo Tower is 333 m tall.";
const HELPER_SYSTEM = "You are the helper: answer in one line.";

/** One way of getting the same answer into a run: ms from the model's call to its next request, what the run cost the database and the CPU. */
export interface AgentCallRow {
  subject: "tool call" | "agent call";
  /** The parent model's request → its next request (the call made and its result saved), ms. */
  call: { p50: number; p99: number; mean: number };
  /** Statements loopd sent for the whole run (one message, one call, the answer), mean. */
  statementsPerRun: number;
  /** CPU of this process per run (loopd, the fake model and the client share it), mean ms. */
  cpuMsPerRun: number;
}

/**
 * agentcall: The step cost of a child agent call against a tool call doing
 * the same work. The same run shape twice, interleaved: the model calls a
 * tool, then answers. In one the tool is `lookup`, which returns the answer
 * at once; in the other it is `agent__helper`, an agent whose own run makes
 * one model call that returns the same answer. loopd runs in this process
 * (buildApp, as the tests start it), so the database's statement counter is
 * readable on PGlite as on Postgres; the fake model answers at once.
 */
export async function measureAgentCallCost({
  open,
  samples,
  logLevel,
}: {
  open: { databaseUrl?: string; dataDir?: string };
  samples: number;
  logLevel: string;
}): Promise<AgentCallRow[]> {
  const llm = await startFakeLlm();
  let arrivals: number[] = [];
  llm.respond = (req) => {
    llm.requests.length = 0;
    const body = req.body as { messages: Array<{ role: string; content: unknown }>; tools?: unknown[] };
    const system = JSON.stringify(body.messages[0]?.content ?? "");
    if (system.includes("You are the helper")) return { text: ANSWER };
    arrivals.push(performance.now());
    if (body.messages.at(-1)?.role === "tool") return { text: "Done." };
    const offered = JSON.stringify(body.tools ?? []);
    return {
      toolCalls: [
        { name: offered.includes("agent__helper") ? "agent__helper" : "lookup", input: { message: "How tall?" } },
      ],
    };
  };
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-agentcall-"));
  const database = await openDatabase({ ...open, program: "the agentcall bench" });
  await database.migrate();
  const lookup = defineTool({
    name: "lookup",
    description: "Answers a question.",
    input: z.object({ message: z.string() }),
    readOnly: true,
    execute: () => ANSWER,
  });
  const loopd = await startLoopd({
    database,
    llm,
    env: { LLM_PROVIDER: "openai", LOG_LEVEL: logLevel, WORKSPACE_DIR: workspace },
    tools: [lookup],
  });
  const inject = async (url: string, payload: object) => {
    const res = await loopd.app.inject({ method: "POST", url, payload });
    if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  try {
    await inject("/agents", { name: "helper", description: "Answers questions", system: HELPER_SYSTEM, tools: [] });
    const subjects = {
      "tool call": { tools: ["lookup"] },
      "agent call": { tools: [], agents: ["helper"] },
    } as const;
    const results = Object.fromEntries(
      Object.keys(subjects).map((k) => [k, { calls: [] as number[], statements: 0, cpu: 0 }]),
    );
    const warmup = 10;
    for (let i = 0; i < samples + warmup; i++) {
      for (const [subject, fields] of Object.entries(subjects)) {
        const conv = await inject("/conversations", fields);
        arrivals = [];
        const statements = database.statements();
        const cpu = process.cpuUsage();
        const { run } = await inject(`/conversations/${conv.id}/messages`, { content: "How tall is Tokyo Tower?" });
        const used = process.cpuUsage(cpu);
        if (run.status !== "completed" || arrivals.length !== 2) throw new Error(`${subject}: run ended ${run.status}`);
        if (i < warmup) continue;
        const r = results[subject]!;
        r.calls.push(arrivals[1]! - arrivals[0]!);
        r.statements += database.statements() - statements;
        r.cpu += (used.user + used.system) / 1000;
      }
    }
    return Object.keys(subjects).map((subject) => {
      const r = results[subject]!;
      return {
        subject: subject as AgentCallRow["subject"],
        call: statsOf(r.calls),
        statementsPerRun: r.statements / samples,
        cpuMsPerRun: r.cpu / samples,
      };
    });
  } finally {
    llm.respond = null;
    await loopd.close();
    await database.close();
    await llm.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

function statsOf(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), mean };
}
