import { describe, expect, test } from "vitest";
import { z } from "zod";
import { decideTurn, NOT_OFFERED_RESULT } from "../../src/agent/decide-turn.js";
import { createFinishChecker, finishToolSpec } from "../../src/agent/finish-tool.js";
import type { PreparedStep } from "../../src/agent/prepare-step.js";
import type { AssistantBlock } from "../../src/core/messages.js";
import type { ModelResponse, ModelStopReason, ToolChoice } from "../../src/core/model-provider.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { createToolBox } from "../../src/tools/tool-box.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";

const registry = createToolRegistry([
  defineTool({ name: "look", description: "Reads.", input: z.object({}), readOnly: true, execute: () => "seen" }),
  defineTool({
    name: "pay",
    description: "Pays.",
    input: z.object({ amount: z.number() }),
    needsApproval: ({ amount }) => amount > 100,
    execute: () => "paid",
  }),
  defineTool({ name: "drop", description: "Deletes.", input: z.object({}), execute: () => "dropped" }),
]);
const finish = { result_schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } };
const toolBox = createToolBox({
  registry,
  allowedTools: ["look", "pay", "drop"],
  clientTools: [{ name: "invoice", description: "Client side.", inputSchema: { type: "object" } }],
  approvalRequired: ["drop"],
  loopTools: [finishToolSpec(finish)],
  workspaceDir: "/nowhere",
});
const checkFinish = createFinishChecker(finish);
const step = (grace: PreparedStep["grace"] = null, toolChoice: ToolChoice = "auto") =>
  ({ grace, request: { toolChoice } }) as PreparedStep;
const answer = (
  content: AssistantBlock[],
  stopReason: ModelStopReason = content.some((b) => b.type === "tool_call") ? "tool_use" : "end_turn",
): ModelResponse => ({
  content,
  stopReason,
  rawStopReason: null,
  usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
  model: "m",
});
const call = (id: string, name: string, input: Record<string, unknown> = {}) => ({
  type: "tool_call" as const,
  id,
  name,
  input,
});
const decide = (
  response: ModelResponse,
  { grace = null as PreparedStep["grace"], finishing = true, nudged = false, toolChoice = "auto" as ToolChoice } = {},
) =>
  decideTurn(response, {
    step: step(grace, toolChoice),
    toolBox,
    checkFinish: finishing ? checkFinish : null,
    nudged: () => nudged,
  });

describe("decideTurn: an answer becomes one Turn", () => {
  test("every call through the tool box's decision, whatever else the step holds: an invalid finish does not let the others skip it", async () => {
    const turn = await decide(
      answer([
        call("1", "finish", {}),
        call("2", "drop"),
        call("3", "invoice"),
        call("4", "look"),
        call("5", "pay", { amount: 500 }),
        call("6", "pay", { amount: 5 }),
      ]),
    );
    expect(turn).toMatchObject({
      type: "run_tools",
      run: [{ id: "4" }, { id: "6" }],
      refused: [{ call: { id: "1" }, message: expect.stringMatching(/^finish was not accepted: .*summary/) }],
      waiting: [
        { tool_call_id: "2", action: "approve" },
        { tool_call_id: "3", action: "submit_output" },
        { tool_call_id: "5", action: "approve" },
      ],
    });
  });

  test("a valid finish ends the run with its result; the step's other calls do not run", async () => {
    const turn = await decide(answer([call("1", "drop"), call("2", "finish", { summary: "Done.", result: { n: 3 } })]));
    expect(turn).toMatchObject({
      type: "finish",
      result: { summary: "Done.", confidence: null, result: { n: 3 } },
      call: { id: "2" },
    });
    expect(turn.type === "finish" && turn.calls.map((c) => c.id)).toEqual(["1", "2"]);
  });

  test("a plain answer: one nudge when the run is to finish with a call, else the end", async () => {
    expect(await decide(answer([{ type: "text", text: "Hi." }]))).toEqual({ type: "nudge_finish" });
    expect(await decide(answer([{ type: "text", text: "Hi." }]), { nudged: true })).toMatchObject({
      type: "end",
      ending: { status: "completed", stopReason: "end_turn", result: null },
    });
    expect(await decide(answer([{ type: "text", text: "Hi." }]), { finishing: false })).toMatchObject({
      type: "end",
      ending: { status: "completed", stopReason: "end_turn" },
    });
  });

  test("the grace call ends the run over its budget, whatever it answers; its calls are not executed", async () => {
    expect(await decide(answer([call("1", "look")]), { grace: { over: "steps" } })).toMatchObject({
      type: "end",
      ending: { status: "incomplete", stopReason: "max_steps", budgetExceeded: "steps" },
      unexecuted: [{ id: "1" }],
      why: expect.stringMatching(/budget ran out/),
    });
    expect(await decide(answer([{ type: "text", text: "What I have." }]), { grace: { over: "cost" } })).toMatchObject({
      type: "end",
      ending: { stopReason: "budget", budgetExceeded: "cost" },
    });
  });

  test("a cut-off or refused answer ends the run, its calls not run (their arguments may be cut)", async () => {
    for (const [stop, reason] of [
      ["max_tokens", "max_tokens"],
      ["context_window_exceeded", "max_tokens"],
      ["refusal", "refusal"],
      ["content_filter", "content_filter"],
    ] as const) {
      expect(await decide(answer([call("1", "look")], stop))).toMatchObject({
        type: "end",
        ending: { status: "incomplete", stopReason: reason },
        unexecuted: [{ id: "1" }],
      });
    }
  });

  test("pause_turn: go on with the calls it has, or call the model again", async () => {
    expect(await decide(answer([{ type: "text", text: "…" }], "pause_turn"))).toEqual({ type: "call_again" });
    expect(await decide(answer([call("1", "look")], "pause_turn"))).toMatchObject({
      type: "run_tools",
      run: [{ id: "1" }],
    });
  });

  test("tool_choice none: no call runs, waits for the application or finishes the run; each is answered that tools were not offered", async () => {
    const turn = await decide(
      answer([
        call("1", "look"),
        call("2", "drop"),
        call("3", "invoice"),
        call("4", "finish", { summary: "Done.", result: { n: 3 } }),
      ]),
      { toolChoice: "none" },
    );
    expect(turn).toEqual({
      type: "run_tools",
      run: [],
      refused: ["1", "2", "3", "4"].map((id) => ({
        call: expect.objectContaining({ id }),
        message: NOT_OFFERED_RESULT,
      })),
      waiting: [],
    });
    expect(NOT_OFFERED_RESULT).toBe("tool call was not executed: tools were not offered on this turn");
  });

  test("a named tool choice: that tool's calls go through the tool box, any other is not offered", async () => {
    const turn = await decide(answer([call("1", "look"), call("2", "drop"), call("3", "pay", { amount: 5 })]), {
      toolChoice: { name: "pay" },
    });
    expect(turn).toMatchObject({
      type: "run_tools",
      run: [{ id: "3" }],
      refused: [
        { call: { id: "1" }, message: `${NOT_OFFERED_RESULT} (only pay was)` },
        { call: { id: "2" }, message: `${NOT_OFFERED_RESULT} (only pay was)` },
      ],
      waiting: [],
    });
  });
});
