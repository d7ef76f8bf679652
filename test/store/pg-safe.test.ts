import fc from "fast-check";
import { expect, test } from "vitest";
import { isPgSafe, pgSafeJson, toPgSafe } from "../../src/store/pg-safe.js";

// Strings of any UTF-16 code units: NULs, lone surrogates, pairs, backslashes and "u" followed by hex digits.
const anyText = fc.string({
  unit: fc.oneof(
    fc.constantFrom("\u0000", "\ud800", "\udfff", "\ud83d\ude00", "\\", "u", "0", "d", "8", "a"),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
});
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyText,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(anyText, tie("value"), { maxKeys: 4 }),
  ),
})).value;

test("pgSafeJson is the JSON of the mended value, whatever it holds, and what it writes is safe to store", () => {
  fc.assert(
    fc.property(anyJson, (value) => {
      const json = pgSafeJson(value);
      expect(json).toBe(JSON.stringify(toPgSafe(value)));
      expect(isPgSafe(JSON.parse(json))).toBe(true);
    }),
    { numRuns: 2_000 },
  );
});

test("a safe value is not copied; an unsafe one is mended in a copy, keys too", () => {
  const safe = { a: ["x", { b: "y\ud83d\ude00" }] };
  expect(toPgSafe(safe)).toBe(safe);
  const unsafe = { "k\u0000": ["\ud800x"], ok: "z" };
  expect(toPgSafe(unsafe)).toEqual({ "k\ufffd": ["\ufffdx"], ok: "z" });
  expect(unsafe).toEqual({ "k\u0000": ["\ud800x"], ok: "z" });
  expect(pgSafeJson(unsafe)).toBe('{"k\ufffd":["\ufffdx"],"ok":"z"}');
  // A backslash the value holds before "u0000" is text, not a NUL: kept as it is.
  expect(JSON.parse(pgSafeJson({ path: "C:\\u0000" }))).toEqual({ path: "C:\\u0000" });
});
