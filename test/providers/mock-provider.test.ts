import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import type { ModelRequest, ToolSpec } from "../../src/core/model-provider.js";
import { findArithmetic } from "../../src/providers/mock/find-arithmetic.js";
import { createMockProvider } from "../../src/providers/mock/index.js";
import { MOCK_INSPECTED_CHARS } from "../../src/providers/mock/plan-mock-reply.js";
import { createCalculateTool, createGetCurrentTimeTool } from "../../src/tools/builtin/index.js";
import { toolResultToText } from "../../src/tools/tool-result-to-text.js";
import { toolResult, user } from "./histories.js";

const tools: ToolSpec[] = [
  { name: "get_current_time", description: "Current time in a timezone", inputSchema: { type: "object" } },
  { name: "calculate", description: "Evaluate arithmetic", inputSchema: { type: "object" } },
];

const request = (messages: NewMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "",
  system: null,
  messages,
  tools,
  toolChoice: "auto",
  maxTokens: 1024,
  ...extra,
});

describe("mock provider", () => {
  const mock = createMockProvider();

  it.each([
    ["What time is it in Tokyo?", "Asia/Tokyo"],
    ["time in New York", "America/New_York"],
    ["what's the time in São Paulo right now?", "America/Sao_Paulo"],
    ["What time is it in Atlantis?", "UTC"],
  ])("answers %j with a get_current_time call for %s", async (question, timezone) => {
    const response = await mock.generate(request([user(question)]));
    expect(response.stopReason).toBe("tool_use");
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "get_current_time", input: { timezone } },
    ]);
  });

  it.each([
    ["what is 12*7", "12*7"],
    ["Calculate (3+4)^2, please.", "(3+4)^2"],
    ["what is 12 times 7?", "12 * 7"],
  ])("answers %j with a calculate call for %s", async (question, expression) => {
    const response = await mock.generate(request([user(question)]));
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "calculate", input: { expression } },
    ]);
  });

  it("calls any offered tool the user spells out with a JSON input, a client's own tool too", async () => {
    const withInvoice = [
      ...tools,
      { name: "create_invoice", description: "Client tool", inputSchema: { type: "object" } },
    ];
    const response = await mock.generate(
      request([user('Please create_invoice {"customer": "ACME", "lines": [1, 2]} now')], { tools: withInvoice }),
    );
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "create_invoice", input: { customer: "ACME", lines: [1, 2] } },
    ]);
    // Not offered, not JSON, or not right after the name: the other rules apply.
    expect((await mock.generate(request([user('create_invoice {"customer": "ACME"}')]))).content[0]!.type).toBe("text");
    expect(
      (await mock.generate(request([user("create_invoice {customer: ACME}")], { tools: withInvoice }))).content[0]!
        .type,
    ).toBe("text");
    expect(
      (await mock.generate(request([user('create_invoice, what is 2+2 {"a": 1}')], { tools: withInvoice }))).content[0],
    ).toMatchObject({ name: "calculate" });
  });

  it("answers in text from the tool results, streaming word by word", async () => {
    const deltas: string[] = [];
    const history: NewMessage[] = [
      user("What time is it in Tokyo?"),
      {
        role: "assistant",
        content: [
          { type: "tool_call", id: "mock_call_1", name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
        ],
      },
      toolResult(
        "mock_call_1",
        "get_current_time",
        JSON.stringify({ timezone: "Asia/Tokyo", iso: "2025-01-06T05:05:00.000Z" }),
      ),
    ];
    const response = await mock.generate(request(history, { onTextDelta: (d) => deltas.push(d) }));
    expect(response.stopReason).toBe("end_turn");
    expect(response.content).toEqual([{ type: "text", text: "It is 14:05 on Monday in Asia/Tokyo." }]);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe("It is 14:05 on Monday in Asia/Tokyo.");
  });

  it("states the result of a calculation and reports a tool error", async () => {
    const calc: NewMessage[] = [
      user("calculate (3+4)^2"),
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "mock_call_1", name: "calculate", input: { expression: "(3+4)^2" } }],
      },
      toolResult("mock_call_1", "calculate", '{"result":49}'),
    ];
    expect((await mock.generate(request(calc))).content).toEqual([{ type: "text", text: "(3+4)^2 = 49" }]);

    const failed = [...calc.slice(0, 2), toolResult("mock_call_1", "calculate", "Error: division by zero", true)];
    expect((await mock.generate(request(failed))).content).toEqual([
      { type: "text", text: "The calculate tool reported an error: division by zero." },
    ]);
  });

  it("numbers tool call ids by the calls already in the history", async () => {
    const history: NewMessage[] = [
      user("what is 1+1"),
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "mock_call_1", name: "calculate", input: { expression: "1+1" } }],
      },
      toolResult("mock_call_1", "calculate", "2"),
      { role: "assistant", content: [{ type: "text", text: "1+1 = 2" }] },
      user("and what time is it in Paris?"),
    ];
    const response = await mock.generate(request(history));
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_2", name: "get_current_time", input: { timezone: "Europe/Paris" } },
    ]);
  });

  it("gives the same reply and usage for the same history", async () => {
    const history = [user("What time is it in Tokyo?")];
    const [a, b] = await Promise.all([mock.generate(request(history)), mock.generate(request(history))]);
    expect(a).toEqual(b);
    expect(a.usage.input_tokens).toBeGreaterThan(0);
    expect(a.usage.output_tokens).toBeGreaterThan(0);
  });

  it("says it is the offline mock and how to set a key when no tool applies", async () => {
    const response = await mock.generate(request([user("Tell me a joke")]));
    expect(response.stopReason).toBe("end_turn");
    const text = response.content[0]?.type === "text" ? response.content[0].text : "";
    expect(text).toContain('"Tell me a joke"');
    expect(text).toContain("offline mock provider");
    expect(text).toContain("ANTHROPIC_API_KEY");
  });

  it("does not call a tool that is unavailable, or when tool choice is none", async () => {
    const noTools = await mock.generate(request([user("What time is it in Tokyo?")], { tools: [] }));
    expect(noTools.stopReason).toBe("end_turn");
    const none = await mock.generate(request([user("what is 12*7")], { toolChoice: "none" }));
    expect(none.stopReason).toBe("end_turn");
  });

  it("throws an AbortError when the signal aborts", async () => {
    const controller = new AbortController();
    const promise = mock.generate(
      request([user("Tell me a joke")], { signal: controller.signal, onTextDelta: () => controller.abort() }),
    );
    await expect(promise).rejects.toMatchObject({ name: "AbortError" });
  });

  it("answers from what the built-in tools really return", async () => {
    const ctx = {
      signal: new AbortController().signal,
      workspaceDir: ".",
      maxResultChars: 16_384,
      toolCallId: "call_1",
      conversationId: null,
      runId: null,
    };
    const timeTool = createGetCurrentTimeTool({ now: () => new Date("2025-01-06T05:05:00Z") });
    const calcTool = createCalculateTool();
    const timeOutput = toolResultToText(await timeTool.execute(timeTool.input.parse({ timezone: "Asia/Tokyo" }), ctx));
    const calcOutput = toolResultToText(await calcTool.execute(calcTool.input.parse({ expression: "(3+4)^2" }), ctx));
    const history: NewMessage[] = [
      user("What time is it in Tokyo, and what is (3+4)^2?"),
      {
        role: "assistant",
        content: [
          { type: "tool_call", id: "mock_call_1", name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
          { type: "tool_call", id: "mock_call_2", name: "calculate", input: { expression: "(3+4)^2" } },
        ],
      },
      toolResult("mock_call_1", "get_current_time", timeOutput),
      toolResult("mock_call_2", "calculate", calcOutput),
    ];
    expect((await mock.generate(request(history))).content).toEqual([
      { type: "text", text: "It is 14:05 on Monday in Asia/Tokyo. (3+4)^2 = 49" },
    ]);
  });
});

describe("mock provider on hostile text", () => {
  // Any client may pick the mock and send it anything. Each input below once
  // took seconds (more, the longer the run): a pattern backtracked through a
  // long run of spaces or dots from every position in it. The bound is the
  // issue's acceptance bound for a whole 1 MiB request.
  const LIMIT_MS = 1000;
  const timed = <T>(work: () => T): { value: T; ms: number } => {
    const started = performance.now();
    const value = work();
    return { value, ms: performance.now() - started };
  };

  it.each([
    ["a long run of spaces", `What is 6*7?${" ".repeat(32 * 1024)}Thanks.`],
    ["a long run of dots and spaces before a number", `${" .".repeat(32 * 1024)}1 apple, and what is 6*7?`],
  ])("reads arithmetic past %s in linear time", (_name, text) => {
    const { value, ms } = timed(() => findArithmetic(text));
    expect(value).toBe("6*7");
    expect(ms).toBeLessThan(LIMIT_MS);
  });

  it.each([
    ["spaces", " ".repeat(1024 * 1024)],
    ["dots and spaces", " .".repeat(512 * 1024)],
    ["letters", "a".repeat(1024 * 1024)],
    ["slashes", "a/".repeat(512 * 1024)],
  ])("answers a question after 1 MiB of %s within the bound", async (_name, filler) => {
    const started = performance.now();
    const response = await createMockProvider().generate(request([user(`${filler}1 apple. What is 6*7?`)]));
    expect(performance.now() - started).toBeLessThan(LIMIT_MS);
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "calculate", input: { expression: "6*7" } },
    ]);
  });

  it("reads only the end of a long question, where the question is", async () => {
    const text = `What time is it in Tokyo?\n${"lorem ipsum ".repeat(MOCK_INSPECTED_CHARS)}\nWhat is 6*7?`;
    const response = await createMockProvider().generate(request([user(text)]));
    expect(response.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "calculate", input: { expression: "6*7" } },
    ]);
  });
});
