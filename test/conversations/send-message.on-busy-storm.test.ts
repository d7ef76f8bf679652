import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testTools } from "../support/helpers/test-tools.js";

/**
 * Many enqueues, interrupts and cancels of queued runs at once on one
 * conversation, with runs ending all the while (found by review: a
 * deadlock between an interrupt and a run's end left a run stuck until its
 * lease lapsed, the queue behind it full).
 */
const f = useLoopd({ listen: true, tools: testTools(), env: { MAX_QUEUED_RUNS: "4" } });
const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const getJson = async (path: string): Promise<any> => (await fetch(`${f.loopd.url}${path}`)).json();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a storm of enqueue/interrupt/cancel: no 500, one run at a time, every started message once, nothing stuck", async () => {
  const conv: any = await (await post("/conversations", { provider: "anthropic" })).json();
  f.llm.respond = () => ({ text: "answered", chunkDelayMs: 3 });
  const statuses: Record<string, number> = {};
  const accepted: { content: string; runId: string }[] = [];
  const bodies500: string[] = [];
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < 60; i++) {
    const content = `m${i}`;
    const onBusy = i % 3 === 0 ? "interrupt" : "enqueue";
    jobs.push(
      (async () => {
        await sleep(i * 15);
        const res = await post(`/conversations/${conv.id}/messages`, { content, on_busy: onBusy, wait: false });
        const text = await res.text();
        const key = res.status === 202 ? "202" : `${res.status}:${JSON.parse(text).error?.code}`;
        statuses[key] = (statuses[key] ?? 0) + 1;
        if (res.status >= 500) bodies500.push(`${onBusy}: ${text}`);
        if (res.status === 202) {
          const run = JSON.parse(text).run;
          accepted.push({ content, runId: run.id });
          if (i % 7 === 0 && run.status === "queued") {
            const c = await post(`/conversations/${conv.id}/runs/${run.id}/cancel`, {});
            if (c.status >= 500) bodies500.push(`cancel: ${await c.text()}`);
          }
        }
      })(),
    );
  }
  await Promise.all(jobs);
  // Let the queue drain.
  let open: any[] = [];
  for (let i = 0; i < 400; i++) {
    open = (await getJson(`/conversations/${conv.id}/runs?limit=100`)).data.filter((r: any) =>
      ["queued", "running"].includes(r.status),
    );
    if (open.length === 0) break;
    await sleep(50);
  }
  const all = (await getJson(`/conversations/${conv.id}/runs?limit=100`)).data;
  const history = (await getJson(`/conversations/${conv.id}/messages?limit=1000`)).data as any[];
  const users = history.filter((m) => m.role === "user").map((m) => m.content[0].text);
  // Every accepted message that started is in the history once; the cancelled-before-start ones never are.
  const neverStarted = new Set(
    all
      .filter((r: any) => r.status === "cancelled" && r.steps === 0 && r.stop_reason === "cancelled")
      .map((r: any) => r.id),
  );
  for (const { content, runId } of accepted) if (!neverStarted.has(runId)) expect(users).toContain(content);
  expect(bodies500).toEqual([]);
  expect(open).toEqual([]);
  expect(new Set(users).size).toBe(users.length);
  expect(all.some((r: any) => r.status === "failed")).toBe(false);
}, 120_000);
