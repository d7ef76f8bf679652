import { expect, test } from "vitest";
import { created, numberWrite } from "../../src/runs/run-numbering.js";

test("a write's messages take the next seqs and its events the next ids; a message.created becomes its message's event id", () => {
  const write = numberWrite(
    { lastSeq: 7, nextMessageSeq: 20 },
    {
      messageCount: 2,
      eventsOf: (first) => [
        { type: "text.delta", data: { delta: "hi" } },
        ...created(1, first),
        { type: "tool_call.completed", data: { seq: first } },
        ...created(1, first + 1),
      ],
    },
  );
  expect(write.messages).toEqual([
    { seq: 20, eventSeq: 9 },
    { seq: 21, eventSeq: 11 },
  ]);
  expect(write.events.map((e) => [e.seq, e.type])).toEqual([
    [8, "text.delta"],
    [10, "tool_call.completed"],
  ]);
  expect(write.next).toEqual({ lastSeq: 11, nextMessageSeq: 22 });
});

test("a message.created of a message outside the write is an event row, and a write of nothing moves nothing", () => {
  const write = numberWrite({ lastSeq: 3, nextMessageSeq: 5 }, { messageCount: 1, eventsOf: () => created(1, 4) });
  expect(write.messages).toEqual([{ seq: 5, eventSeq: undefined }]);
  expect(write.events).toEqual([{ seq: 4, type: "message.created", data: { seq: 4 } }]);
  expect(numberWrite({ lastSeq: 3, nextMessageSeq: 5 }, { messageCount: 0, eventsOf: () => [] }).next).toEqual({
    lastSeq: 3,
    nextMessageSeq: 5,
  });
});

test("a tool result carries its call's start and end when they say what it says; anything else stays a row", () => {
  const result = (id: string, is_error = false) => ({
    type: "tool_result" as const,
    tool_call_id: id,
    name: "calc",
    content: "4",
    is_error,
  });
  const results = [result("a"), result("b", true)];
  const write = numberWrite(
    { lastSeq: 2, nextMessageSeq: 10 },
    {
      messageCount: 2,
      resultOf: (i) => results[i],
      eventsOf: (first) => [
        { type: "tool_call.started", data: { tool_call_id: "a", name: "calc", input: { x: 1 } } },
        { type: "tool_call.started", data: { tool_call_id: "b", name: "other", input: {} } }, // another name: a row
        ...created(2, first),
        {
          type: "tool_call.completed",
          data: { tool_call_id: "a", name: "calc", is_error: false, duration_ms: 7, seq: first },
        },
        // says false where the result says true: a row
        {
          type: "tool_call.completed",
          data: { tool_call_id: "b", name: "calc", is_error: false, duration_ms: 1, seq: first + 1 },
        },
        // a fractional duration would not come back whole: a row
        {
          type: "tool_call.completed",
          data: { tool_call_id: "a", name: "calc", is_error: false, duration_ms: 0.5, seq: first },
        },
      ],
    },
  );
  expect(write.messages).toEqual([
    { seq: 10, eventSeq: 5, startedEventSeq: 3, completedEventSeq: 7, durationMs: 7 },
    { seq: 11, eventSeq: 6 },
  ]);
  expect(write.events.map((e) => e.seq)).toEqual([4, 8, 9]);
  expect(write.carried.map((e) => [e.seq, e.type])).toEqual([
    [3, "tool_call.started"],
    [7, "tool_call.completed"],
  ]);
  expect(write.next).toEqual({ lastSeq: 9, nextMessageSeq: 12 });
});
