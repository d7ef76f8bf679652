/**
 * The per-tenant cap of open runs holds across instances: it is counted in
 * the database under a lock of the tenant's, so two instances starting runs
 * for one tenant at the same moment cannot both get the last place.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const env = { API_KEYS_REQUIRED: "true", MAX_ACTIVE_RUNS_PER_TENANT: "1" };
const f = useLoopd({ env, instanceId: "instance-a" });
let b: TestLoopd;
let bDatabase: typeof f.database;
beforeAll(async () => {
  // A pool of its own on Postgres; the same database object embedded (one process).
  bDatabase = f.testDb.kind === "postgres" ? await f.testDb.open() : f.database;
  b = await startLoopd({ database: bDatabase, llm: f.llm, env, instanceId: "instance-b" });
});
afterAll(async () => {
  await b?.close();
  if (bDatabase !== f.database) await bDatabase?.close();
});

test("two instances, one place left: exactly one run starts, the other gets 429 too_many_runs (10 rounds)", async () => {
  const key = (await f.loopd.services.store.keys.create({ tenant: "racer", name: null })).key;
  const headers = { authorization: `Bearer ${key}` };
  for (let round = 0; round < 10; round++) {
    const [one, two] = await Promise.all(
      [f.loopd, b].map(
        async (loopd) =>
          (
            await loopd.app.inject({
              method: "POST",
              url: "/conversations",
              payload: { provider: "openai", approval_required: ["calculate"] },
              headers,
            })
          ).json().id as string,
      ),
    );
    // Each run pauses (it holds its place) until it is cancelled below.
    f.llm.respond = () => ({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const answers = await Promise.all([
      f.loopd.app.inject({
        method: "POST",
        url: `/conversations/${one}/messages`,
        payload: { content: "Add." },
        headers,
      }),
      b.app.inject({ method: "POST", url: `/conversations/${two}/messages`, payload: { content: "Add." }, headers }),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 429]);
    const started = answers.find((a) => a.statusCode === 200)!.json().run;
    expect(answers.find((a) => a.statusCode === 429)!.json()).toMatchObject({
      error: { code: "too_many_runs", details: { active_runs: 1 } },
    });
    const cancelled = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${started.conversation_id}/runs/${started.id}/cancel`,
      headers,
    });
    expect(cancelled.statusCode).toBe(200);
  }
});
