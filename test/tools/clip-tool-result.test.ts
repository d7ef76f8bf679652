import { describe, expect, it } from "vitest";
import { clipToolResult, MAX_TOOL_RESULT_CHARS } from "../../src/tools/clip-tool-result.js";

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MARKER = /\n\n\[… (\d+) characters left out …\]\n\n/;

describe("clipToolResult", () => {
  it("leaves text at or under the limit alone", () => {
    const text = "x".repeat(MAX_TOOL_RESULT_CHARS);
    expect(clipToolResult(text)).toBe(text);
    expect(clipToolResult("short")).toBe("short");
  });

  it("keeps the head and the tail and counts exactly what it left out", () => {
    const text = "H".repeat(30_000) + "M".repeat(10_000) + "T".repeat(30_000);
    const clipped = clipToolResult(text);
    expect(clipped.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
    expect(clipped.length).toBeGreaterThan(MAX_TOOL_RESULT_CHARS - 10);
    const match = MARKER.exec(clipped);
    expect(match).not.toBeNull();
    const [head, tail] = clipped.split(match![0]);
    expect(head).toMatch(/^H+$/);
    expect(tail).toMatch(/^T+$/);
    expect(Number(match![1])).toBe(text.length - head!.length - tail!.length);
  });

  it("honours a smaller limit", () => {
    const text = "abcdefghij".repeat(100);
    const clipped = clipToolResult(text, { maxChars: 100 });
    expect(clipped.length).toBeLessThanOrEqual(100);
    expect(clipped.startsWith("abcdefghij")).toBe(true);
    expect(clipped.endsWith("abcdefghij")).toBe(true);
  });

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(20_000);
    const clipped = clipToolResult(text);
    expect(clipped.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
    expect(clipped).not.toMatch(LONE_SURROGATE);
    const [head, tail] = clipped.split(MARKER.exec(clipped)![0]);
    expect(Number(MARKER.exec(clipped)![1])).toBe(text.length - head!.length - tail!.length);
  });
});
