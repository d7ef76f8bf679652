import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SendMessageRequest, TaskState, type Task } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { closeSubjects } from "../lib/close-subjects.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { childrenOf, cpuMsOf, machineBusyMs, titleOf } from "../lib/proc-cpu.js";
import { openServerMonitor, type ServerMonitor } from "../lib/server-monitor.js";
import { SCENARIOS } from "../lib/run-shapes.js";
import { startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

export const CALLER_PATHS = ["messages", "mcp", "a2a"] as const;
export type CallerPath = (typeof CALLER_PATHS)[number];

export interface AgentCallers {
  rows: AgentCallerRow[];
  /** The machine's busy CPU over the rows, as a share of all its cores (others' load included), and loopd's own share. */
  machineBusy: number;
  loopdBusy: number;
}

export interface AgentCallerRow {
  path: CallerPath;
  /** ms of each call, as its caller saw it, round by round (index i: round i). */
  latencies: number[];
  /** loopd's own CPU ms per call (the process, from /proc, summed over the calls). */
  cpuPerCall: number;
  /** Postgres only (a server on this machine): CPU ms per call of the backends serving loopd's database; null on PGlite (its work is loopd's own). */
  databaseCpuPerCall: number | null;
  /** This process's CPU ms per call: the caller's client (and the fake LLM, the same for every path). */
  clientCpuPerCall: number;
}

const AGENT = "adder";
const WARMUP = 20;

/**
 * mcp-a2a: one agent called three ways, the same run each time (a new
 * conversation from the agent, one `calculate` call, an answer): a client
 * doing it over loopd's API (`POST /conversations` with the agent, then a
 * non-streaming `POST …/messages`), the official MCP SDK's client calling the
 * tool `agent_adder` over Streamable HTTP (one session for the whole row),
 * and `@a2a-js/sdk`'s client sending a blocking `SendMessage` (its card
 * resolved once). Interleaved round by round, the order rotating, so a busy
 * moment of the machine falls on every path alike. One loopd process.
 */
export async function measureAgentCallers({
  serverUrl,
  rounds,
  logLevel,
}: {
  serverUrl: string | undefined;
  rounds: number;
  logLevel: string;
}): Promise<AgentCallers> {
  const llm = await startFakeLlm();
  llm.respond = SCENARIOS.tool.respond;
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-callers-"));
  const database = await createBenchDatabase(serverUrl);
  const processes: LoopdProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  let monitor: ServerMonitor | undefined;
  try {
    if (serverUrl && database.name) monitor = await openServerMonitor(serverUrl);
    const backends = backendsOf(monitor?.postmasterPid ?? null, database.name, monitor?.backendPid);
    const loopd = await startLoopdProcess({
      env: {
        ...database.env,
        ...openAiOnFakeLlm(llm.url),
        LOG_LEVEL: logLevel,
        WORKSPACE_DIR: dir,
      },
    });
    processes.push(loopd);
    await post(loopd.url, "/agents", { name: AGENT, system: "You add up.", tools: ["calculate"] });
    const calls: Record<CallerPath, () => Promise<void>> = {
      messages: await messagesCaller(loopd.url),
      mcp: await mcpCaller(loopd.url, closers),
      a2a: await a2aCaller(loopd.url),
    };
    const samples = Object.fromEntries(
      CALLER_PATHS.map((p) => [p, { latencies: [] as number[], cpu: 0, clientCpu: 0, databaseCpu: 0 }]),
    ) as Record<CallerPath, { latencies: number[]; cpu: number; clientCpu: number; databaseCpu: number }>;
    let window = { wall: 0, busy: 0, loopd: 0 };
    for (let i = 0; i < rounds + WARMUP; i++) {
      if (i === WARMUP) window = { wall: performance.now(), busy: machineBusyMs(), loopd: cpuMsOf(loopd.pid) ?? 0 };
      // The order rotates: no path always follows the same one.
      for (let k = 0; k < CALLER_PATHS.length; k++) {
        const p = CALLER_PATHS[(i + k) % CALLER_PATHS.length]!;
        const db0 = backends?.();
        const cpu0 = cpuMsOf(loopd.pid) ?? 0;
        const client0 = process.cpuUsage();
        const t0 = performance.now();
        await calls[p]();
        const t1 = performance.now();
        const client = process.cpuUsage(client0);
        const cpu1 = cpuMsOf(loopd.pid) ?? 0;
        const db1 = backends?.();
        if (i < WARMUP) continue;
        const sample = samples[p];
        sample.latencies.push(t1 - t0);
        sample.cpu += cpu1 - cpu0;
        sample.clientCpu += (client.user + client.system) / 1000;
        if (db0 && db1) for (const [pid, ms] of db1) sample.databaseCpu += ms - (db0.get(pid) ?? 0);
      }
    }
    const capacity = (performance.now() - window.wall) * os.cpus().length;
    return {
      rows: CALLER_PATHS.map((p) => ({
        path: p,
        latencies: samples[p].latencies,
        cpuPerCall: samples[p].cpu / rounds,
        clientCpuPerCall: samples[p].clientCpu / rounds,
        databaseCpuPerCall: backends ? samples[p].databaseCpu / rounds : null,
      })),
      machineBusy: (machineBusyMs() - window.busy) / capacity,
      loopdBusy: ((cpuMsOf(loopd.pid) ?? 0) - window.loopd) / capacity,
    };
  } finally {
    for (const close of closers) await close().catch(() => {});
    await monitor?.close();
    await closeSubjects({ llm, processes, databases: [database], dir });
  }
}

/**
 * The CPU ms each backend serving `databaseName` has used so far, by pid
 * (from /proc; the server must run here); a call's share is the growth
 * between two readings (a backend forked meanwhile counts from zero). null
 * without a local server.
 */
function backendsOf(postmasterPid: number | null, databaseName: string | undefined, ignorePid: number | undefined) {
  if (postmasterPid === null || databaseName === undefined) return null;
  const mark = ` ${databaseName} `;
  return () => {
    const cpu = new Map<number, number>();
    for (const pid of childrenOf(postmasterPid)) {
      if (pid === ignorePid || !titleOf(pid)?.includes(mark)) continue;
      const ms = cpuMsOf(pid);
      if (ms !== null) cpu.set(pid, ms);
    }
    return cpu;
  };
}

/** A conversation from the agent, then its run: the two requests a client of loopd's own API makes. */
async function messagesCaller(url: string) {
  return async () => {
    const { id } = await post(url, "/conversations", { agent: AGENT });
    const body = await post(url, `/conversations/${id as string}/messages`, { content: SCENARIOS.tool.prompt });
    const run = body.run as { id: string; status: string };
    if (run.status !== "completed") throw new Error(`messages: run ${run.id} ended ${run.status}`);
  };
}

/** The MCP SDK's client, one session: each call a `tools/call` of the agent's tool (a new conversation each). */
async function mcpCaller(url: string, closers: Array<() => Promise<void>>) {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  closers.push(() => client.close());
  return async () => {
    const result = await client.callTool({ name: `agent_${AGENT}`, arguments: { message: SCENARIOS.tool.prompt } });
    if (result.isError) throw new Error(`mcp: ${JSON.stringify(result.content)}`);
  };
}

/** The A2A SDK's client, from the agent's card (read once): each call a blocking `SendMessage` without a context (a new one each). */
async function a2aCaller(url: string) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory()],
      cardResolver: new DefaultAgentCardResolver(),
    }),
  );
  const client = await factory.createFromUrl(`${url}/a2a/${AGENT}/`);
  return async () => {
    const answer = await client.sendMessage(
      SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: SCENARIOS.tool.prompt }] },
      }),
    );
    const state = (answer as Task).status?.state;
    if (state !== TaskState.TASK_STATE_COMPLETED) throw new Error(`a2a: the task ended in state ${String(state)}`);
  };
}

async function post(url: string, at: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${at}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
