import { createHash } from "node:crypto";
import { expect, test } from "vitest";
import { bodySha256, createBodyHasher } from "../../../src/runs/trace/body-hash.js";

const message = (i: number, extra = "") => ({
  role: i % 2 ? "assistant" : "user",
  content: [{ type: "text", text: `message ${i}${extra}` }],
});

test("a run's hasher gives each body the hash of its canonical JSON, however the bodies change from call to call", () => {
  const hashBody = createBodyHasher();
  const history = Array.from({ length: 30 }, (_, i) => message(i));
  const bodies = [
    { model: "m", stream: true, messages: history.slice(0, 1) },
    { model: "m", stream: true, messages: history.slice(0, 3) }, // grown
    { model: "m", stream: true, messages: [...history.slice(0, 2), message(2, " (breakpoint)")] }, // its end changed
    { model: "m", stream: true, messages: history.slice(0, 20) }, // grown past the kept states
    { model: "m", stream: true, messages: [message(0, " (stub)"), ...history.slice(1, 21)] }, // its start changed
    { stream: true, model: "m", tool_choice: "none", messages: history.slice(0, 21) }, // another head
    { model: "m", messages: [] },
    { model: "m" },
  ];
  for (const body of bodies) expect(hashBody(body)).toBe(bodySha256(body));
  // Canonical: keys sorted at every level, messages last; the same value whatever the key order.
  expect(bodySha256({ b: 1, messages: [{ z: 1, a: [2] }], a: "x" })).toBe(
    createHash("sha256").update('{"a":"x","b":1,"messages":[{"a":[2],"z":1}]}').digest("hex"),
  );
  expect(bodySha256({ messages: [{ a: [2], z: 1 }], a: "x", b: 1 })).toBe(
    bodySha256({ b: 1, messages: [{ z: 1, a: [2] }], a: "x" }),
  );
});
