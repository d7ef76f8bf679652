import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, test } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../src/tools/define-tool.js";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const BIG_RESULT = 150_000;
const bigTool = defineTool({
  name: "big",
  description: "Returns a lot.",
  input: z.object({ n: z.number() }),
  readOnly: true,
  maxResultChars: BIG_RESULT + 1000,
  execute: ({ n }) => `${n}${"x".repeat(BIG_RESULT)}`,
});
const f = useLoopd({ listen: true, tools: [bigTool] });

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const STEPS = 1000;
const RESULT_CHARS = 30_000;

/**
 * A run of 1,000 steps, each with a 30 KB tool result, written straight into
 * the tables (as its writer would have: each answer and result with its
 * span, the JSON text of its short form, the run's end after them).
 */
async function bigRun(): Promise<{ conversationId: string; runId: string }> {
  const conv = await api(f.loopd.app).createConversation({ provider: "mock" });
  const run = (await api(f.loopd.app).send(conv.id, { content: "hello" })).json().run;
  const q = (text: string, values: unknown[]) => f.database.query({ name: "", text, values });
  await q(
    `insert into messages (id, conversation_id, seq, role, content, run_id, span)
     select 'msg_big_' || g, $1, 2 + g, case when g % 2 = 1 then 'assistant' else 'tool' end,
       case when g % 2 = 1
         then jsonb_build_array(jsonb_build_object('type', 'tool_call', 'id', 'call_' || g, 'name', 'calculate', 'input', jsonb_build_object('expression', g || '+1')))
         else jsonb_build_array(jsonb_build_object('type', 'tool_result', 'tool_call_id', 'call_' || (g - 1), 'name', 'calculate', 'content', g || repeat('x', $3::integer), 'is_error', false)) end,
       $2,
       to_jsonb((case when g % 2 = 1
         then jsonb_set(jsonb_set(jsonb_set(jsonb_set(
             (select (span #>> '{}')::jsonb from messages where conversation_id = $1 and run_id = $2 and role = 'assistant' limit 1),
             '{0}', to_jsonb((g + 1) / 2)), '{7}', '"tool_use"'), '{8}', jsonb_build_array(1, 1, 0, 0)), '{10}', 'null')
         else jsonb_build_array('executed', 'ok', 1) end)::text)
     from generate_series(1, $4::integer * 2) g`,
    [conv.id, run.id, RESULT_CHARS, STEPS],
  );
  await q(`update run_spans set next_message_seq = 3 + $2::integer * 2 where run_id = $1 and type = 'run.end'`, [
    run.id,
    STEPS,
  ]);
  return { conversationId: conv.id, runId: run.id };
}

test("the NDJSON export of a 1,000-step run streams in bounded memory", async () => {
  const { conversationId, runId } = await bigRun();
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = 0;
  let bytes = 0;
  let sinceGc = 0;
  let tail = "";
  let lines = 0;
  const res = await fetch(`${f.loopd.url}/conversations/${conversationId}/runs/${runId}/trace`, {
    headers: { accept: "application/x-ndjson" },
  });
  expect(res.status).toBe(200);
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    sinceGc += chunk.length;
    const text = tail + decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    tail = parts.pop()!;
    lines += parts.length;
    if (sinceGc > 2_000_000) {
      sinceGc = 0;
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    }
  }
  // The run, its setup, its one real call and its end, and the 2,000 spans of the 1,000 steps.
  expect(lines).toBe(1 + 3 + STEPS * 2);
  expect(bytes).toBeGreaterThan(STEPS * RESULT_CHARS);
  // Whatever stays reachable while streaming is a page or two, not the export (30 MB).
  console.log(`streamed ${bytes} bytes; heap growth at most ${peak} bytes`);
  expect(peak).toBeLessThan(8_000_000);
}, 120_000);

/** Reads a response's body a chunk at a time, the heap's growth over `baseline` measured every 2 MB (after a GC). */
async function streamed(res: Response, baseline: number): Promise<{ bytes: number; peak: number; text: () => string }> {
  let bytes = 0;
  let sinceGc = 0;
  let peak = 0;
  let head = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    sinceGc += chunk.length;
    if (head.length < 200) head += Buffer.from(chunk).toString("utf8", 0, 200);
    if (sinceGc > 2_000_000) {
      sinceGc = 0;
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    }
  }
  return { bytes, peak, text: () => head };
}

test("?expand=requests of a long run over a large history streams span by span, in the JSON form too", async () => {
  // Every request holds the whole history (not the default trim's stubs): a large one.
  const conv = await api(f.loopd.app).createConversation({
    provider: "openai",
    tools: ["big"],
    caching: false,
    context: { strategy: "full" },
  });
  const STEPS = 12;
  let calls = 0;
  f.llm.respond = () =>
    ++calls < STEPS
      ? { toolCalls: [{ name: "big", input: { n: calls } }], usage: { input: 1, output: 1 } }
      : { text: "Done.", usage: { input: 1, output: 1 } };
  const run = (await api(f.loopd.app).send(conv.id, { content: "Read a lot.", max_steps: STEPS })).json().run;
  f.llm.respond = null;
  // The last of max_steps is the grace call.
  expect(run, JSON.stringify(run.error)).toMatchObject({ steps: STEPS, stop_reason: "max_steps" });
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const res = await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/trace?expand=requests`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const { bytes, peak, text } = await streamed(res, baseline);
  expect(text()).toMatch(/^\{"run":\{"id":"run_/);
  // Each call's request holds the history so far: about 12 × 0.9 MB in all, never held at once.
  console.log(`expanded trace: ${bytes} bytes streamed; heap growth at most ${peak} bytes`);
  expect(bytes).toBeGreaterThan((STEPS * (STEPS - 1) * BIG_RESULT) / 2);
  expect(peak).toBeLessThan(bytes / 2);
}, 120_000);
