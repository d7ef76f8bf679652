import { expect, test, vi } from "vitest";
import { api } from "../support/helpers/api.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Before the fix: callModel awaits `provider.whenReady()` (Intake.quiet) without the
// run's signal: a run cancelled while its model call waits for the intake
// stays running until the intake is quiet or INTAKE_PRIORITY_MS passed (up to
// 10 s, the variable's maximum). POST …/cancel waits for the run's end (10 s
// at most) and so answers late, and here with the run still `running`; a
// shutdown waits the same way. The wait is the safest point there is to stop
// at: nothing has been sent.

const f = useLoopd({ env: { INTAKE_PRIORITY_MS: "10000" } });
const intake = () => f.loopd.services.intake;

test(`a run cancelled while its model call waits for the intake stops at once (${testDatabaseKind})`, async () => {
  const client = api(f.loopd.app);
  const conv = await client.createConversation({ provider: "openai" });
  f.llm.script({ text: "never asked for" });
  // A request that starts a run is being taken (a slow one: its database, its webhook's DNS lookup…).
  const taken = intake().begin();
  try {
    const res = await client.send(conv.id, { content: "hi", wait: false });
    expect(res.statusCode).toBe(202);
    const runId = res.json().run.id as string;
    await vi.waitFor(() => expect(intake().waiting).toBe(1), { timeout: 10_000, interval: 5 });

    const started = Date.now();
    const cancelled = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${runId}/cancel`,
    });
    const tookMs = Date.now() - started;
    expect({ status: cancelled.json().status, answeredWithin2s: tookMs < 2_000 }).toEqual({
      status: "cancelled",
      answeredWithin2s: true,
    });
    expect(f.llm.requests).toHaveLength(0);
  } finally {
    taken();
  }
});
