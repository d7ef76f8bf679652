import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/tools/define-tool.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";

const noop = () => "ok";

describe("defineTool", () => {
  it("derives an object JSON Schema without $schema that both providers accept", () => {
    const tool = defineTool({
      name: "lookup",
      description: "Looks things up",
      input: z.object({ query: z.string().describe("what to find"), limit: z.number().int().default(10) }),
      execute: noop,
    });
    expect(tool.inputSchema).not.toHaveProperty("$schema");
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.inputSchema.properties).toMatchObject({ query: { type: "string", description: "what to find" } });
    // A field with a default is optional for the model.
    expect(tool.inputSchema.required).toEqual(["query"]);
  });

  it("defaults readOnly to false and keeps timeoutMs", () => {
    const tool = defineTool({ name: "t", description: "", input: z.object({}), execute: noop, timeoutMs: 5 });
    expect(tool.readOnly).toBe(false);
    expect(tool.timeoutMs).toBe(5);
  });

  it("adds type object to a union of object schemas", () => {
    const tool = defineTool({
      name: "either",
      description: "",
      input: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]),
      execute: noop,
    });
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.inputSchema.anyOf).toHaveLength(2);
  });

  it("refuses an input schema that is not an object", () => {
    expect(() => defineTool({ name: "bad", description: "", input: z.string(), execute: noop })).toThrow(
      /object schema/,
    );
  });

  it("refuses names the providers would reject", () => {
    expect(() => defineTool({ name: "has space", description: "", input: z.object({}), execute: noop })).toThrow(
      /tool name/,
    );
  });
});

describe("createToolRegistry", () => {
  const make = (name: string) => defineTool({ name, description: `${name} tool`, input: z.object({}), execute: noop });

  it("throws on duplicate names", () => {
    expect(() => createToolRegistry([make("a"), make("a")])).toThrow(/duplicate tool name: a/);
  });

  it("gives specs in registration order, filtered by name, skipping unknown names", () => {
    const registry = createToolRegistry([make("a"), make("b"), make("c")]);
    expect(registry.names()).toEqual(["a", "b", "c"]);
    expect(registry.specs().map((s) => s.name)).toEqual(["a", "b", "c"]);
    expect(registry.specs(["c", "a", "gone"]).map((s) => s.name)).toEqual(["a", "c"]);
    expect(registry.specs(["b"])[0]).toEqual({
      name: "b",
      description: "b tool",
      inputSchema: { type: "object", properties: {} },
    });
    expect(registry.has("b")).toBe(true);
    expect(registry.has("z")).toBe(false);
    expect(registry.get("c")?.name).toBe("c");
    expect(registry.get("z")).toBeUndefined();
  });
});
