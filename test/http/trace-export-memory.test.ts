import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, test } from "vitest";
import { api } from "../helpers/api.js";
import { useLoopd } from "../helpers/use-loopd.js";

const f = useLoopd({ listen: true });

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const STEPS = 1000;
const RESULT_CHARS = 30_000;

/**
 * A run of 1,000 steps, each with a 30 KB tool result, written straight into
 * the tables (as its writer would have: each answer and result with its
 * span, the run's end after them).
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
       case when g % 2 = 1
         then (select span from messages where conversation_id = $1 and run_id = $2 and role = 'assistant' limit 1)
           || jsonb_build_object('step', (g + 1) / 2, 'response', jsonb_build_object('stop_reason', 'tool_use', 'model', 'loopd-mock', 'request_id', null,
                'usage', jsonb_build_array(1, 1, 0, 0)))
         else jsonb_build_object('status', 'ok', 'duration_ms', 1, 'source', 'executed') end
     from generate_series(1, $4::integer * 2) g`,
    [conv.id, run.id, RESULT_CHARS, STEPS],
  );
  await q(`update run_spans set next_message_seq = 3 + $2::integer * 2 where run_id = $1 and type = 'run.end'`, [run.id, STEPS]);
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
  const res = await fetch(`${f.loopd.url}/conversations/${conversationId}/runs/${runId}/trace`, { headers: { accept: "application/x-ndjson" } });
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
