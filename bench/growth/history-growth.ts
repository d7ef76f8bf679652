import type OpenAI from "openai";
import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { callDirect } from "../lib/call-direct.js";
import type { LoopdClient } from "../lib/loopd-client.js";
import { timeMany, type Stats } from "../lib/measure.js";
import { SCENARIOS } from "../lib/run-shapes.js";

export interface GrowthRow {
  /** Messages in the conversation when the window of samples started. */
  messages: number;
  direct: Stats;
  loopd: Stats;
}

/**
 * (b, whole process) One conversation grown run by run to each checkpoint;
 * there, `samples` more runs are timed against the same model request (the
 * whole history, as loopd sent it) made directly through the SDK.
 */
export async function measureHistoryGrowth({
  llm,
  loopd,
  sdk,
  checkpoints,
  samples,
}: {
  llm: FakeLlm;
  loopd: LoopdClient;
  sdk: OpenAI;
  checkpoints: number[];
  samples: number;
}): Promise<GrowthRow[]> {
  llm.respond = SCENARIOS.text.respond;
  const conversation = await loopd.createConversation();
  const rows: GrowthRow[] = [];
  for (const checkpoint of checkpoints) {
    while ((await loopd.messageCount(conversation)) < checkpoint) {
      await loopd.send(conversation, "Say ok.");
      llm.requests.length = 0;
    }
    const messages = await loopd.messageCount(conversation);
    const viaLoopd = await timeMany(samples, 1, () => loopd.send(conversation, "Say ok.").then(() => {}));
    const last = llm.requests.at(-1)?.body as unknown;
    llm.requests.length = 0;
    const direct = await timeMany(samples, 1, () => callDirect(sdk, [last]));
    rows.push({ messages, direct, loopd: viaLoopd });
  }
  return rows;
}
