import { sql } from "drizzle-orm";
import { expect, test, vi } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Renewals every second (RUN_LEASE_MS / 3, at most 1 s): a lost lease is noticed within about a second.
const f = useLoopd({ env: { RUN_LEASE_MS: "3000" } });

/** Whether this process's RunSignals still keeps a published batch for the run (any `afterSeq` it would serve). */
function keepsBatch(runId: string): boolean {
  for (let after = 0; after < 100; after++) if (f.loopd.services.signals.publishedAfter(runId, after)) return true;
  return false;
}

async function runIdOf(conversationId: string): Promise<string> {
  let id = "";
  await vi.waitFor(
    async () => {
      const runs = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversationId}/runs` })).json();
      id = runs.data[0]?.id;
      expect(id).toBeTruthy();
    },
    { timeout: 5_000, interval: 20 },
  );
  return id;
}

test(
  "a run whose lease is lost while it waits on the model (noticed by the lease renewal, no save after) forgets what it handed to its readers once it stops here",
  { timeout: 30_000 },
  async () => {
    // The run that loses its lease: some text streamed (written and published), then the model stalls.
    f.llm.script({ text: "one two three four five six seven", stallAfterChunks: 4, keepAliveMs: 100 });
    const lost = (
      await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
    ).json();
    const pending = f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${lost.id}/messages`,
      payload: { content: "hi" },
    });
    const lostRun = await runIdOf(lost.id);
    await vi.waitFor(() => expect(keepsBatch(lostRun)).toBe(true), { timeout: 5_000, interval: 20 });

    // Another instance takes the run over (its lease is now someone else's, far from expiring: no sweep takes it back).
    await f.database.db.execute(
      sql`update runs set lease_owner = 'another-instance', lease_expires_at = now() + interval '1 hour' where id = ${lostRun}`,
    );
    await vi.waitFor(() => expect(f.loopd.runs.isLocal(lostRun)).toBe(false), { timeout: 10_000, interval: 50 });
    // (The request that started it waits on for the run's end, which another instance is to record: not awaited.)
    void pending.catch(() => {});
    // Before the fix, nothing ever forgot it: one batch per such run for the life of the process.
    await vi.waitFor(
      () => expect(keepsBatch(lostRun), "the lost run's last batch is still kept by this process").toBe(false),
      { timeout: 5_000, interval: 20 },
    );
  },
);
