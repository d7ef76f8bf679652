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
