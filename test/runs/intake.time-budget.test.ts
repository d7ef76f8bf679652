import { expect, test, vi } from "vitest";
import { api } from "../support/helpers/api.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Before the fix: a step's call timeout is computed from the run's time left in
// prepareStep, before callModel waits for the intake; the wait is then not
// taken from it. A run whose time budget runs out while its call waits still
// sends the call afterwards with the whole of the time it had before, so it
// passes max_seconds by up to INTAKE_PRIORITY_MS (10 s at most) on each call,
// where README promises RUN_GRACE_MS is "all a run may pass its time budget by".

// The intake holds for up to 10 s: without the fix the run takes that long; with it, its 1 s and the grace.
const f = useLoopd({ env: { INTAKE_PRIORITY_MS: "10000", RUN_GRACE_MS: "500" } });
const intake = () => f.loopd.services.intake;

test(`a model call waiting for the intake does not take a run past its max_seconds (${testDatabaseKind})`, async () => {
  const client = api(f.loopd.app);
  const conv = await client.createConversation({ provider: "openai" });
  f.llm.respond = () => ({ text: "answered" });
  // A request that starts a run is being taken for a while.
  const taken = intake().begin();
  try {
    const started = Date.now();
    const sent = client.send(conv.id, { content: "hi", budget: { max_seconds: 1 } });
    await vi.waitFor(() => expect(intake().waiting).toBe(1), { timeout: 10_000, interval: 5 });
    const res = await sent;
    const tookS = (Date.now() - started) / 1000;
    // max_seconds 1 + RUN_GRACE_MS 0.5, and three seconds of slack for a busy machine (one was not enough at load 12).
    expect({ run: res.json().run.status, withinBudget: tookS <= 4.5 ? true : tookS }).toEqual({
      run: expect.any(String),
      withinBudget: true,
    });
  } finally {
    taken();
  }
});
