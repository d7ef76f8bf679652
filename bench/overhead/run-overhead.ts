import type OpenAI from "openai";
import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { callDirect } from "../lib/call-direct.js";
import type { LoopdClient } from "../lib/loopd-client.js";
import { timeMany, type Stats } from "../lib/measure.js";
import { SCENARIOS, type Scenario } from "../lib/run-shapes.js";

export interface OverheadRow {
  scenario: Scenario;
  concurrency: number;
  direct: Stats;
  loopd: Stats;
}

/**
 * overhead: A full loopd run (POST /messages, non-streaming, a fresh conversation
 * each) against the same model calls made directly through the SDK.
 */
export async function measureRunOverhead({
  llm,
  loopd,
  sdk,
  scenario,
  runs,
  concurrencies,
  warmup = 20,
}: {
  llm: FakeLlm;
  loopd: LoopdClient;
  sdk: OpenAI;
  scenario: Scenario;
  runs: number;
  concurrencies: number[];
  warmup?: number;
}): Promise<OverheadRow[]> {
  const { prompt, respond } = SCENARIOS[scenario];
  llm.respond = respond;

  // One run to record the exact requests loopd makes; the baseline replays them.
  llm.requests.length = 0;
  await loopd.send(await loopd.createConversation(), prompt);
  const bodies = llm.requests.map((r) => r.body as unknown);

  await timeMany(warmup, 1, () => callDirect(sdk, bodies));
  const warm = await conversations(loopd, warmup);
  await timeMany(warmup, 1, (i) => loopd.send(warm[i]!, prompt).then(() => {}));

  const rows: OverheadRow[] = [];
  for (const concurrency of concurrencies) {
    const fresh = await conversations(loopd, runs);
    llm.requests.length = 0;
    const direct = await timeMany(runs, concurrency, () => callDirect(sdk, bodies));
    const viaLoopd = await timeMany(runs, concurrency, (i) => loopd.send(fresh[i]!, prompt).then(() => {}));
    llm.requests.length = 0;
    rows.push({ scenario, concurrency, direct, loopd: viaLoopd });
  }
  return rows;
}

async function conversations(loopd: LoopdClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await loopd.createConversation());
  return ids;
}
