import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("TOOL_CONCURRENCY", () => {
  it("defaults to 8 and takes a positive integer", () => {
    expect(loadConfig({}).toolConcurrency).toBe(8);
    expect(loadConfig({ TOOL_CONCURRENCY: "3" }).toolConcurrency).toBe(3);
  });

  it.each(["0", "-1", "2.5", "many"])("refuses %s", (value) => {
    expect(() => loadConfig({ TOOL_CONCURRENCY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TOOL_CONCURRENCY: value })).toThrow(/TOOL_CONCURRENCY/);
  });
});
