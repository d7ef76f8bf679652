import { sql } from "drizzle-orm";
import { expect, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// A check (passing): concurrent first messages of one tenant, on the one-statement path, never open more runs than the cap;
// concurrent sends with one Idempotency-Key on one conversation make one run, answered to all.
const CAP = 3;
const f = useLoopd({ env: { MAX_ACTIVE_RUNS_PER_TENANT: String(CAP) } });

const post = (url: string, payload?: object, headers?: Record<string, string>) =>
  f.loopd.app.inject({ method: "POST", url, ...(payload && { payload }), ...(headers && { headers }) });
const rowsOf = async (query: ReturnType<typeof sql>) =>
  ((await f.database.db.execute(query)) as unknown as { rows: Record<string, unknown>[] }).rows;

test(
  `tenant cap and idempotency under concurrent fast-path creations (${testDatabaseKind})`,
  { timeout: 60_000 },
  async () => {
    const N = 8;
    f.llm.script(...Array.from({ length: N + 2 }, () => ({ hang: true as const })));
    const convs = await Promise.all(
      Array.from({ length: N }, async () => (await post("/conversations", { provider: "openai" })).json()),
    );
    const sends = convs.map((c) =>
      post(`/conversations/${c.id}/messages`, { content: "hi" }).then((r) => r.statusCode),
    );
    const refused: number[] = [];
    await vi.waitFor(
      async () => {
        const open = await rowsOf(
          sql`select count(*)::int as n from runs where status in ('queued', 'running', 'requires_action')`,
        );
        expect(Number(open[0]!.n)).toBe(CAP);
      },
      { timeout: 10_000, interval: 50 },
    );
    // The refused ones answer at once.
    const settled = await Promise.all(
      sends.map((s) => Promise.race([s, new Promise<number>((r) => setTimeout(() => r(0), 2_000))])),
    );
    refused.push(...settled.filter((s) => s === 429));
    expect(refused.length).toBe(N - CAP);
    const open = await rowsOf(
      sql`select r.id, r.conversation_id from runs r where status in ('queued', 'running', 'requires_action')`,
    );
    expect(open.length).toBe(CAP);
    for (const r of open) await post(`/conversations/${r.conversation_id}/runs/${r.id}/cancel`);
    await Promise.all(sends);

    // Same key, same conversation, at once: one run.
    f.llm.reset();
    f.llm.script({ text: "once" }, { text: "twice?" }, { text: "thrice?" });
    const conv = (await post("/conversations", { provider: "openai" })).json();
    const same = await Promise.all(
      [1, 2, 3].map(() => post(`/conversations/${conv.id}/messages`, { content: "k" }, { "idempotency-key": "same" })),
    );
    expect(same.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(same.map((r) => r.json().run.id)).size).toBe(1);
    expect((await rowsOf(sql`select count(*)::int as n from runs where conversation_id = ${conv.id}`))[0]!.n).toBe(1);
  },
);
