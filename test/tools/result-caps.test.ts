import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { createReadFileTool } from "../../src/tools/builtin/read-file.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { executeToolCalls, type ToolCallOutcome } from "../../src/tools/execute-tool-calls.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";
import { runTool } from "./run-tool.js";

const long = (n: number) =>
  Array.from({ length: n }, (_, i) => `line ${i} `)
    .join("")
    .slice(0, n);
const shout = (name: string, maxResultChars?: number) =>
  defineTool({
    name,
    description: name,
    input: z.object({ n: z.number() }),
    readOnly: true,
    ...(maxResultChars && { maxResultChars }),
    execute: ({ n }) => long(n),
  });

async function resultsOf(
  options: Omit<Parameters<typeof executeToolCalls>[0], "workspaceDir">,
): Promise<ToolCallOutcome[]> {
  const out: ToolCallOutcome[] = [];
  for await (const outcome of executeToolCalls({ ...options, workspaceDir: "/nonexistent" })) out.push(outcome);
  return out;
}

describe("tool result caps", () => {
  test("a tool's own cap wins over the executor's default; both keep head and tail and say how much was cut", async () => {
    const registry = createToolRegistry([shout("capped", 1000), shout("plain")]);
    const [capped, plain] = await resultsOf({
      registry,
      maxResultChars: 3000,
      calls: [
        { type: "tool_call", id: "a", name: "capped", input: { n: 20_000 } },
        { type: "tool_call", id: "b", name: "plain", input: { n: 20_000 } },
      ],
    });
    expect(capped!.result.content.length).toBeLessThanOrEqual(1000);
    expect(plain!.result.content.length).toBeLessThanOrEqual(3000);
    expect(plain!.result.content.length).toBeGreaterThan(2500);
    for (const { result } of [capped!, plain!]) {
      expect(result.content.startsWith("line 0 ")).toBe(true);
      expect(result.content).toMatch(/\[… \d+ characters left out …\]/);
      expect(result.content.endsWith(long(20_000).slice(-20))).toBe(true);
    }
  });

  test("defineTool refuses a cap that is not a whole number of at least 256", () => {
    expect(() => shout("tiny", 10)).toThrow(/maxResultChars/);
    expect(() => shout("fraction", 300.5)).toThrow(/maxResultChars/);
  });

  test("read_file pages within its cap: a clean 'continue at line' instead of a cut", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-caps-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      path.join(dir, "big.txt"),
      Array.from({ length: 1000 }, (_, i) => `row ${i} ${"x".repeat(40)}`).join("\n"),
    );
    const text = String(
      await runTool(createReadFileTool(), { path: "big.txt" }, { workspaceDir: dir, maxResultChars: 2000 }),
    );
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text).not.toMatch(/characters left out/);
    expect(text).toMatch(/offset/);
  });

  test("configured per tool by name: TOOL_RESULT_MAX_CHARS and TOOL_RESULT_MAX_CHARS_BY_TOOL", () => {
    const config = loadConfig({
      TOOL_RESULT_MAX_CHARS: "4000",
      TOOL_RESULT_MAX_CHARS_BY_TOOL: "read_file=32000, search_files = 8000",
    });
    expect(config.tools.resultMaxChars).toBe(4000);
    expect(config.tools.resultMaxCharsByTool).toEqual({ read_file: 32_000, search_files: 8000 });
    expect(loadConfig({}).tools.resultMaxChars).toBe(16_384);
    expect(() => loadConfig({ TOOL_RESULT_MAX_CHARS_BY_TOOL: "read_file" })).toThrow(/TOOL_RESULT_MAX_CHARS_BY_TOOL/);
    expect(() => loadConfig({ TOOL_RESULT_MAX_CHARS_BY_TOOL: "read_file=12" })).toThrow(
      /TOOL_RESULT_MAX_CHARS_BY_TOOL/,
    );
  });
});
