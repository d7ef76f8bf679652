import { expect, test } from "vitest";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Before the fix: callModel waits for the intake *after* the stop policy weighed
// the call, at most the run's time left. When that wait is what uses up the
// run's max_seconds, the call is sent anyway as a normal call with a call
// timeout of max(0, time left) = 0 ms: it is aborted on the next tick, comes
// back `out_of_time`, and the run ends over budget with no answer. No call was
// in flight when the time ran out — only held — so README's rule applies
// ("Budgets are weighed before every model call"; when a budget runs out while
// the model still wants tools, the grace turn): a run whose time ran out while
// its tools ran gets its grace turn (test/agent/stop-policy.budgets.test.ts), one whose
// time ran out while its next call was held by INTAKE_PRIORITY_MS loses it,
// and a request doomed to be aborted on the next tick is handed to the SDK.

// max_seconds 6: the first step (a call and a tool) must end with time left for the hold to use up, also on a
// busy machine (at max_seconds 1 and load 12 it did not, nor at 3 with two suites at once on 2 cores). The grace
// call's window (RUN_GRACE_MS) is what the grace turn may take: 3 s was not always enough at load 13 (no notice,
// no answer).
const f = useLoopd({ env: { INTAKE_PRIORITY_MS: "10000", RUN_GRACE_MS: "10000" } });
const intake = () => f.loopd.services.intake;

const toolsDisabled = (req: RecordedRequest) => req.body.tool_choice === "none";

test(`a run whose time runs out while its next call is held still gets its grace turn (${testDatabaseKind})`, async () => {
  const client = api(f.loopd.app);
  const conv = await client.createConversation({ provider: "openai" });
  let holding = null as (() => void) | null;
  f.llm.respond = (req) => {
    if (toolsDisabled(req)) return { text: "Here is what I have." };
    // While the first call answers, a request that starts a run arrives and is slow to be taken
    // (the intake lets go of it after INTAKE_PRIORITY_MS at the latest: 10 s, past the run's 6 s).
    holding ??= intake().begin();
    return { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] };
  };
  try {
    const body = (await client.send(conv.id, { content: "Compute, then answer.", budget: { max_seconds: 6 } })).json();
    expect(intake().held.calls).toBeGreaterThan(0);
    expect({
      run: { status: body.run.status, stop_reason: body.run.stop_reason, budget_exceeded: body.run.budget_exceeded },
      notice: body.messages.some((m: { kind?: string }) => m.kind === "notice"),
      output_text: body.output_text,
    }).toEqual({
      run: { status: "incomplete", stop_reason: "budget", budget_exceeded: "seconds" },
      notice: true,
      output_text: "Here is what I have.",
    });
  } finally {
    holding?.();
  }
});
