import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { buildContext } from "../../src/agent/build-context.js";
import type { ContextSettings } from "../../src/core/context-settings.js";
import { estimateMessageTokens } from "../../src/agent/estimate-tokens.js";
import type { NewMessage, TextBlock } from "../../src/core/messages.js";
import { toolResults } from "../support/helpers/tool-heavy-conversation.js";

const user = (text: string, extra: Partial<NewMessage> = {}): NewMessage =>
  ({ role: "user", content: [{ type: "text", text }], ...extra }) as NewMessage;
const step = (id: string, content: string, name = "read_file"): NewMessage[] => [
  { role: "assistant", content: [{ type: "tool_call", id, name, input: { path: `${id}.ts` } }] },
  { role: "tool", content: [{ type: "tool_result", tool_call_id: id, name, content, is_error: false }] },
];
const answer = (text: string): NewMessage => ({ role: "assistant", content: [{ type: "text", text }] });
const trim = (over: Partial<ContextSettings> = {}): ContextSettings => ({
  strategy: "trim",
  keep_tool_results: 3,
  max_input_tokens: null,
  ...over,
});

/** A history growing one step at a time: the contexts of each call, in order. */
function contextsOfRun(steps: number, settings: ContextSettings) {
  const results = toolResults(steps, { seed: 11 });
  const history: NewMessage[] = [user("Go through the code base and report.")];
  const contexts: NewMessage[][] = [];
  for (let i = 0; i < steps; i++) {
    // A copy: with nothing left out, the context is the history array itself.
    contexts.push([...buildContext({ history, settings }).messages]);
    history.push(...step(`toolu_${i}`, results[i]!.content));
  }
  contexts.push([...buildContext({ history, settings }).messages]);
  return { history, contexts };
}

test("trim: an old result's images are cleared with it, whatever its text's length", () => {
  const image = {
    type: "image" as const,
    attachment_id: "att_1",
    media_type: "image/png" as const,
    bytes: 100,
    width: 800,
    height: 600,
  };
  const history: NewMessage[] = [user("Draw.")];
  for (let i = 0; i < 3; i++) {
    history.push({ role: "assistant", content: [{ type: "tool_call", id: `toolu_${i}`, name: "draw", input: {} }] });
    history.push({
      role: "tool",
      content: [
        {
          type: "tool_result",
          tool_call_id: `toolu_${i}`,
          name: "draw",
          content: "A chart.",
          is_error: false,
          images: [image],
        },
      ],
    });
  }
  const { messages } = buildContext({ history, settings: trim({ keep_tool_results: 1 }) });
  const results = messages.flatMap((m) => (m.role === "tool" ? m.content : []));
  expect(results.map((r) => r.images?.length ?? 0)).toEqual([0, 0, 1]);
  expect(results[0]!.content).toBe(
    "[result of draw cleared from the context to save space: 8 chars, an image; call draw again if you need it]",
  );
  // The image counts in the estimate, by Anthropic's rule (the only provider sent it): 800×600 / 750.
  expect(
    estimateMessageTokens(history[2]!) -
      estimateMessageTokens({
        role: "tool",
        content: [{ ...(history[2]!.content[0] as object), images: [] }],
      } as unknown as NewMessage),
  ).toBe(3 + 640);
});

const isStub = (m: NewMessage) => m.role === "tool" && m.content[0].content.startsWith("[result of ");
const json = (messages: NewMessage[]) => messages.map((m) => JSON.stringify(m));
const isPrefix = (a: NewMessage[], b: NewMessage[]) =>
  a.length <= b.length && json(a).every((m, i) => m === JSON.stringify(b[i]));

/** Every call has its one result right after it, and every result its call. */
function expectPaired(messages: NewMessage[]) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const calls = m.content.flatMap((b) => (b.type === "tool_call" ? [b.id] : []));
    const answered = messages
      .slice(i + 1, i + 1 + calls.length)
      .flatMap((r) => (r.role === "tool" ? [r.content[0].tool_call_id] : []));
    expect(answered.sort()).toEqual([...calls].sort());
  }
  const called = new Set(
    messages.flatMap((m) =>
      m.role === "assistant" ? m.content.flatMap((b) => (b.type === "tool_call" ? [b.id] : [])) : [],
    ),
  );
  for (const m of messages) if (m.role === "tool") expect(called.has(m.content[0].tool_call_id)).toBe(true);
}

describe("the context builder", () => {
  test("full: the history as it is, without refused turns", () => {
    const history = [
      user("hi"),
      answer("hello"),
      user("bad", { excluded: "refusal" }),
      { ...answer(""), excluded: "refusal" } as NewMessage,
      user("ok"),
    ];
    const built = buildContext({ history });
    expect(built.messages).toEqual([history[0], history[1], history[4]]);
    expect(built.leftOut).toEqual({ refused: 2, trimmed: 0 });
    expect(built.stubbed).toBe(0);
    // Nothing to leave out: the very same array, not a copy.
    const clean = [user("hi"), answer("hello")];
    expect(buildContext({ history: clean }).messages).toBe(clean);
  });

  test("trim: old results go as a stub that keeps the call's id and says how to get them back; keep..2×keep-1 stay whole", () => {
    const { history, contexts } = contextsOfRun(20, trim({ keep_tool_results: 3 }));
    for (const context of contexts) {
      const results = context.filter((m) => m.role === "tool");
      const whole = results.filter((m) => !isStub(m)).length;
      expect(whole).toBeLessThanOrEqual(5);
      expect(whole).toBeGreaterThanOrEqual(Math.min(3, results.length));
      expectPaired(context);
    }
    const last = contexts.at(-1)!;
    const stub = last.find(isStub)!;
    expect(stub.role === "tool" && stub.content[0]).toMatchObject({
      tool_call_id: "toolu_0",
      name: "read_file",
      is_error: false,
    });
    const original = history[2]!.role === "tool" ? history[2]!.content[0].content.length : 0;
    expect(stub.role === "tool" && stub.content[0].content).toBe(
      `[result of read_file cleared from the context to save space: ${original.toLocaleString("en-US")} chars; call read_file again if you need it]`,
    );
    // The newest results are whole, and the stored history was not touched.
    expect(isStub(last.at(-1)!)).toBe(false);
    expect(history.some(isStub)).toBe(false);
  });

  test("trim: between two clearings every context starts with the previous one byte for byte; clearings come keep_tool_results at a time", () => {
    const { contexts } = contextsOfRun(30, trim({ keep_tool_results: 4 }));
    let clearings = 0;
    for (let k = 1; k < contexts.length; k++) if (!isPrefix(contexts[k - 1]!, contexts[k]!)) clearings++;
    // 30 results, 4 kept: cleared at 8, 12, 16, 20, 24, 28 results.
    expect(clearings).toBe(6);
  });

  test("trim never clears the results of the model's last step, however many calls it made", () => {
    const results = toolResults(12, { seed: 2 });
    const calls = results.map((_, i) => ({
      type: "tool_call" as const,
      id: `call_${i}`,
      name: "read_file",
      input: {},
    }));
    const history: NewMessage[] = [
      user("Read them all."),
      { role: "assistant", content: calls },
      ...results.map((r, i): NewMessage => ({
        role: "tool",
        content: [
          { type: "tool_result", tool_call_id: `call_${i}`, name: "read_file", content: r.content, is_error: false },
        ],
      })),
    ];
    const built = buildContext({ history, settings: trim({ keep_tool_results: 2 }) });
    expect(built.stubbed).toBe(0);
    expect(built.messages).toEqual(history);
  });

  test("max_input_tokens: the oldest exchanges are left out whole, the newest user message and the last step stay, and a note says so", () => {
    const results = toolResults(40, { seed: 5 });
    const history: NewMessage[] = [];
    for (let e = 0; e < 10; e++) {
      history.push(user(`Question ${e}`));
      for (let s = 0; s < 4; s++) history.push(...step(`toolu_${e}_${s}`, results[e * 4 + s]!.content));
      history.push(answer(`Answer ${e}`));
    }
    history.push(user("The newest question"));
    const settings = trim({ keep_tool_results: 100, max_input_tokens: 8000 });
    const built = buildContext({ history, settings });
    expect(built.estimatedTokens).toBeLessThanOrEqual(8000);
    expect(built.leftOut.trimmed).toBeGreaterThan(0);
    // The newest user message is sent (the note goes in front of it when it is all that is left).
    const last = built.messages.at(-1)!;
    expect(last.role === "user" && (last.content.at(-1) as TextBlock).text).toBe("The newest question");
    expectPaired(built.messages);
    const first = built.messages[0]!;
    expect(first.role).toBe("user");
    expect(first.role === "user" && (first.content[0] as TextBlock).text).toBe(
      `[${built.leftOut.trimmed} earlier messages of this conversation left out to fit the context window]`,
    );
    // Whole exchanges: what follows the note is a user message of the history, from where its exchange starts.
    expect(first.role === "user" && (first.content[1] as TextBlock).text).toMatch(
      /^(Question \d|The newest question)$/,
    );
  });

  test("max_input_tokens within one long exchange: its oldest steps go, its user message stays first, its last step stays", () => {
    const results = toolResults(30, { seed: 9 });
    const history: NewMessage[] = [user("One long task")];
    for (let s = 0; s < 30; s++) history.push(...step(`toolu_${s}`, results[s]!.content));
    const built = buildContext({ history, settings: trim({ keep_tool_results: 100, max_input_tokens: 6000 }) });
    expect(built.estimatedTokens).toBeLessThanOrEqual(6000);
    const first = built.messages[0]!;
    expect(first.role === "user" && first.content.map((b) => (b as TextBlock).text).at(-1)).toBe("One long task");
    expect(built.messages.slice(-2)).toEqual(history.slice(-2));
    expectPaired(built.messages);
  });

  test("max_input_tokens: the cut moves in quarter steps, so most calls extend the previous call's context", () => {
    const results = toolResults(60, { seed: 4 });
    const settings = trim({ keep_tool_results: 100, max_input_tokens: 12_000 });
    const history: NewMessage[] = [];
    const contexts: NewMessage[][] = [];
    let added = 0;
    // A model call after every step: the question, each call and its result, the answer.
    const grow = (...messages: NewMessage[]) => {
      history.push(...messages);
      contexts.push([...buildContext({ history, settings }).messages]);
    };
    for (let e = 0; e < 30; e++) {
      grow(user(`Question ${e}`));
      grow(...step(`toolu_${e}_a`, results[2 * e]!.content));
      grow(...step(`toolu_${e}_b`, results[2 * e + 1]!.content));
      grow(answer(`Answer ${e}`));
    }
    for (const m of history) added += estimateMessageTokens(m);
    let cuts = 0;
    for (let k = 1; k < contexts.length; k++) if (!isPrefix(contexts[k - 1]!, contexts[k]!)) cuts++;
    // Past the limit the cut moves once per quarter of the limit the history grows by (or per exchange, when exchanges are bigger).
    expect(cuts).toBeGreaterThan(0);
    expect(cuts).toBeLessThanOrEqual(Math.ceil((added - 12_000) / 3000) + 30 / 2);
    expect(cuts).toBeLessThan(contexts.length / 2);
  });

  test("any valid history, any settings: calls stay paired, order is kept, the newest user message and the last step are sent", () => {
    const historyArb = fc
      .array(
        fc.record({
          calls: fc.integer({ min: 0, max: 3 }),
          size: fc.integer({ min: 10, max: 3000 }),
          refused: fc.boolean(),
          notice: fc.boolean(),
        }),
        { minLength: 1, maxLength: 25 },
      )
      .map((exchanges) => {
        const history: NewMessage[] = [];
        exchanges.forEach((x, e) => {
          const refused = x.refused && e < exchanges.length - 1;
          const mark = (m: NewMessage): NewMessage => (refused ? { ...m, excluded: "refusal" } : m);
          history.push(mark(user(`q${e}`)));
          for (let c = 0; c < x.calls; c++) history.push(...step(`t_${e}_${c}`, "x".repeat(x.size)).map(mark));
          if (x.notice) history.push(mark(user("notice", { kind: "notice" })));
          history.push(mark(answer(`a${e}`)));
        });
        return history;
      });
    const settingsArb = fc.record({
      strategy: fc.constantFrom("full" as const, "trim" as const),
      keep_tool_results: fc.integer({ min: 1, max: 8 }),
      max_input_tokens: fc.option(fc.integer({ min: 1000, max: 20_000 }), { nil: null }),
    });
    fc.assert(
      fc.property(historyArb, settingsArb, (history, settings) => {
        const { messages } = buildContext({ history, settings });
        expectPaired(messages);
        expect(messages.some((m) => m.excluded)).toBe(false);
        const sent = history.filter((m) => !m.excluded);
        const newestUser = sent.findLast((m) => m.role === "user" && m.kind !== "notice")!;
        expect(
          messages.some(
            (m) => m === newestUser || (m.role === "user" && m.content.at(-1) === newestUser.content.at(-1)),
          ),
        ).toBe(true);
        const lastAssistant = sent.findLast((m) => m.role === "assistant");
        if (lastAssistant) expect(messages).toContain(lastAssistant);
        // Each message sent is the stored one, its stub, or (first) the stored one with a note: in the history's order.
        let at = -1;
        for (const m of messages) {
          const id = m.role === "tool" ? m.content[0].tool_call_id : null;
          const found = sent.findIndex(
            (s, i) =>
              i > at &&
              (s === m ||
                (id !== null && s.role === "tool" && s.content[0].tool_call_id === id) ||
                (m.role === "user" && s.role === "user" && m.content.at(-1) === s.content.at(-1))),
          );
          expect(found).toBeGreaterThan(at);
          at = found;
        }
      }),
      { numRuns: 300 },
    );
  });
});
