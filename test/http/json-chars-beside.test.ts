import { expect, test } from "vitest";
import { jsonCharsBeside } from "../../src/http/plugins/json-chars-beside.js";

test("the string values of the key are left out; keys, other strings and escapes count", () => {
  const data = "A".repeat(1_000);
  const body = JSON.stringify({
    content: [
      { type: "text", text: 'say "data": \\"x\\"' },
      { type: "image", source: { type: "base64", media_type: "image/png", data } },
    ],
  });
  expect(jsonCharsBeside(body, "data")).toBe(body.length - JSON.stringify(data).length);
  // "data" as a value, and as text, is not the key.
  const text = JSON.stringify({ content: "data", other: { text: '"data":"' + data + '"' } });
  expect(jsonCharsBeside(text, "data")).toBe(text.length);
  // With spaces around the colon, as any client may write it.
  expect(jsonCharsBeside(`{ "data" :  "${data}" }`, "data")).toBe(`{ "data" :  "" }`.length - 2);
});

test("text that is not JSON gets a count too, without throwing", () => {
  expect(jsonCharsBeside('{"data": "unterminated', "data")).toBe('{"data": "unterminated'.length);
  expect(jsonCharsBeside("", "data")).toBe(0);
});
