import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { compileUserSchema, isCheckableSchema } from "../../src/json-schema/json-schema.js";

describe("a user's JSON Schema, checked in linear time", () => {
  test("each pattern is its own (not the first one compiled), and a catastrophic one answers at once", () => {
    const schema = compileUserSchema({
      type: "object",
      properties: { code: { type: "string", pattern: "^(a+)+$" }, zip: { type: "string", pattern: "^[0-9]{5}$" } },
      required: ["code"],
    });
    expect(schema.check({ code: "aaaa", zip: "12345" })).toEqual([]);
    expect(schema.check({ code: "aaaa", zip: "1234x" })).toEqual([
      { path: ["zip"], message: 'must match pattern "^[0-9]{5}$"' },
    ]);
    // With the backtracking engine: 2^60 steps.
    expect(schema.check({ code: `${"a".repeat(60)}!` })).toEqual([
      { path: ["code"], message: 'must match pattern "^(a+)+$"' },
    ]);
    expect(schema.check({})).toEqual([{ path: ["code"], message: "is required" }]);
  });

  test("what it cannot check is refused up front: a pattern RE2 cannot run, an unresolved $ref", () => {
    expect(isCheckableSchema({ type: "string", pattern: "^(?=a)a$" })).toBe(false);
    expect(isCheckableSchema({ type: "string", pattern: "^(a)\\1$" })).toBe(false);
    expect(isCheckableSchema({ type: "object", properties: { a: { $ref: "#/nowhere" } } })).toBe(false);
    // Not a JSON Schema at all (checked against the meta-schema).
    expect(isCheckableSchema({ type: 5 })).toBe(false);
    expect(isCheckableSchema({ type: "object", required: "a" })).toBe(false);
    expect(isCheckableSchema({ type: "object", properties: { when: { type: "string", format: "date-time" } } })).toBe(
      true,
    );
  });

  test("problems name where they are: nested properties, array items, formats", () => {
    const schema = compileUserSchema({
      type: "object",
      properties: {
        items: { type: "array", items: { type: "object", properties: { n: { type: "number" } } } },
        when: { type: "string", format: "date" },
      },
      additionalProperties: false,
    });
    expect(schema.check({ items: [{ n: 1 }, { n: "two" }], when: "soon", extra: 1 })).toEqual([
      { path: ["extra"], message: "is not allowed" },
      { path: ["items", 1, "n"], message: "must be number" },
      { path: ["when"], message: 'must match format "date"' },
    ]);
  });
});

describe("each schema on its own", () => {
  test("a schema's $id is its own: compiled again it still compiles, and another schema cannot $ref it", () => {
    const named = {
      $id: "urn:client-a:total",
      type: "object",
      properties: { total: { type: "number" } },
      required: ["total"],
    };
    expect(isCheckableSchema(named)).toBe(true);
    // A run compiles the schema its request was checked with.
    expect(compileUserSchema(named).check({ total: 1 })).toEqual([]);
    expect(isCheckableSchema({ $ref: "urn:client-a:total" })).toBe(false);
  });

  test("nothing compiled is kept: the schemas are collected once their checks are gone", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const refs = Array.from({ length: 50 }, (_, i) => {
      const schema = { type: "object", properties: { [`p${i}`]: { type: "string", pattern: `^x{${i}}$` } } };
      compileUserSchema(schema).check({});
      return new WeakRef(schema);
    });
    for (let i = 0; i < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      gc();
    }
    // A shared compiler kept all 50; what a collection may still leave at its edges (the last one or two) is not a store.
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThan(5);
  });
});
