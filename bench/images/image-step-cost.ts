import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { noisePng } from "../../test/support/helpers/test-images.js";
import { summarize, type Stats } from "../lib/measure.js";
import { cpuMsOf } from "../lib/proc-cpu.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

/** One subject of images: a conversation whose first message holds `images` images, then tool steps. */
export interface ImageStepRow {
  images: number;
  /** Wall ms per tool step, over each run. */
  step: Stats;
  /** loopd's own CPU ms per tool step (the process, from /proc), mean over the runs. */
  cpuPerStep: number;
  /** Bytes of the last model request (what each step sends). */
  lastRequestBytes: number;
}

/**
 * images: What images already in a conversation cost each later step: the same
 * tool-calling run (`steps` steps of `calculate`, then an answer) on a
 * conversation whose first message held 10 images of about 300 KB (noise,
 * uncompressed PNG: nothing to gain from compression) against one whose
 * first message was text alone, interleaved run by run, on Anthropic's wire
 * format (the fake LLM). Every request carries the images as base64, so the
 * bytes sent grow with them; loopd's CPU per step should not, beyond
 * writing those bytes out (the attachments are read and encoded once per
 * run, each message converted once).
 */
export async function measureImageStepCost({
  databaseEnv,
  runs,
  steps,
  logLevel,
}: {
  databaseEnv: Record<string, string>;
  runs: number;
  steps: number;
  logLevel: string;
}): Promise<ImageStepRow[]> {
  const llm = await startFakeLlm();
  const loopd = await startLoopdProcess({
    env: {
      ...databaseEnv,
      LLM_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: "bench",
      ANTHROPIC_BASE_URL: llm.url,
      LOG_LEVEL: logLevel,
    },
  });
  const images = Array.from({ length: 10 }, () => noisePng(320, 320).toString("base64"));
  llm.respond = (req) => {
    // The first exchange (where the images come): an answer.
    if ((req.body.messages as unknown[]).length === 1) return { text: "I see them." };
    const results = (req.body.messages as { content: unknown }[])
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: { type?: string }) => b.type === "tool_result").length;
    return results < steps
      ? { toolCalls: [{ name: "calculate", input: { expression: `${results}+1` } }] }
      : { text: "Done." };
  };
  const post = async (at: string, body: unknown) => {
    const res = await fetch(`${loopd.url}${at}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${at}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
    return json;
  };
  /** A conversation with a first exchange (holding `count` images), then a timed run of tool steps on it. */
  const timeRun = async (count: number) => {
    const conv = (await post("/conversations", { tools: ["calculate"], context: { strategy: "full" } })).id as string;
    const content = [
      { type: "text", text: "Look at these." },
      ...images
        .slice(0, count)
        .map((data) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } })),
    ];
    await post(`/conversations/${conv}/messages`, { content });
    const cpu0 = cpuMsOf(loopd.pid)!;
    const t0 = performance.now();
    const { run } = await post(`/conversations/${conv}/messages`, { content: "Count.", max_steps: steps + 2 });
    const wall = performance.now() - t0;
    const cpu = cpuMsOf(loopd.pid)! - cpu0;
    if (run.status !== "completed" || run.steps !== steps + 1)
      throw new Error(`run ended ${run.status} after ${run.steps} steps: ${JSON.stringify(run.error)}`);
    return { step: wall / steps, cpu: cpu / steps, lastRequestBytes: JSON.stringify(llm.requests.at(-1)!.body).length };
  };
  try {
    const subjects = [0, 10];
    const samples = subjects.map(() => ({ step: [] as number[], cpu: [] as number[], bytes: 0 }));
    const warmup = 2;
    const t0 = performance.now();
    for (let i = 0; i < runs + warmup; i++) {
      for (const [k, count] of subjects.entries()) {
        llm.requests.length = 0;
        const r = await timeRun(count);
        if (i < warmup) continue;
        samples[k]!.step.push(r.step);
        samples[k]!.cpu.push(r.cpu);
        samples[k]!.bytes = r.lastRequestBytes;
      }
    }
    const wall = performance.now() - t0;
    return subjects.map((images, k) => ({
      images,
      step: summarize(samples[k]!.step, wall),
      cpuPerStep: samples[k]!.cpu.reduce((a, b) => a + b, 0) / samples[k]!.cpu.length,
      lastRequestBytes: samples[k]!.bytes,
    }));
  } finally {
    await loopd.stop();
    await llm.close();
  }
}
