/**
 * The tool box decides each call once, for the tool its name means then. A
 * call to a tool not found at that moment (an MCP server listing its tools
 * again) is answered as a call to an unknown tool, even if the tool is back
 * by the time the call runs: it would otherwise run undecided — without the
 * approval it needs, and, read as read-only, before the answer that made it
 * is saved (the loop writes a step's answer with its results when every
 * call only reads).
 */
import { expect, test } from "vitest";
import { z } from "zod";
import type { ToolCallBlock } from "../../src/core/messages.js";
import { defineTool, type Tool } from "../../src/tools/define-tool.js";
import type { ToolCallOutcome } from "../../src/tools/execute-tool-calls.js";
import { createToolBox } from "../../src/tools/tool-box.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";
import { fixedToolSet, type ToolSet } from "../../src/tools/tool-set.js";

/** A server's tools that come and go, as an MCP server's do while it restarts. */
function changingTools(initial: Tool[]): ToolSet & { set(tools: Tool[]): void } {
  let tools = initial;
  let version = 0;
  return {
    ...fixedToolSet([]),
    tools: () => tools,
    version: () => version,
    set(next) {
      tools = next;
      version++;
    },
  };
}

const calls = { look: 0, wipe: 0 };
const look = defineTool({
  name: "srv__look",
  description: "Reads.",
  input: z.object({}),
  readOnly: true,
  execute: () => (calls.look++, "seen"),
});
const wipe = defineTool({
  name: "srv__wipe",
  description: "Deletes everything.",
  input: z.object({}),
  needsApproval: true,
  execute: () => (calls.wipe++, "wiped"),
});

async function outcomes(run: AsyncIterable<ToolCallOutcome>): Promise<ToolCallOutcome[]> {
  const all: ToolCallOutcome[] = [];
  for await (const outcome of run) all.push(outcome);
  return all;
}

test("a call decided while its tool was gone runs nothing when the tool is back: no approval skipped, nothing run early", async () => {
  const server = changingTools([look, wipe]);
  const box = createToolBox({
    registry: createToolRegistry([], [server]),
    allowedTools: ["srv__look", "srv__wipe"],
    workspaceDir: "/nowhere",
  });
  const call: ToolCallBlock = { type: "tool_call", id: "call_1", name: "srv__wipe", input: {} };
  expect(box.decide({ ...call, id: "call_0" })).toBe("approve");

  server.set([]); // the server restarts
  expect(box.decide(call)).toBe("run"); // an unknown tool: the model reads that
  server.set([look, wipe]); // and is back before the call runs
  expect(box.readOnly(call)).toBe(true); // it runs nothing
  const [outcome] = await outcomes(box.run([call], {}));
  expect(outcome!.result).toMatchObject({ is_error: true });
  expect(outcome!.result.content).toMatch(/^Unknown tool "srv__wipe"/);
  expect(calls.wipe).toBe(0);
});

test("read-only is the decided tool's word: a name that means a read-only tool later still ran one with effects", () => {
  const server = changingTools([{ ...wipe, name: "srv__look", needsApproval: () => false }]);
  const box = createToolBox({
    registry: createToolRegistry([], [server]),
    allowedTools: ["srv__look"],
    workspaceDir: "/nowhere",
  });
  const call: ToolCallBlock = { type: "tool_call", id: "call_2", name: "srv__look", input: {} };
  expect(box.decide(call)).toBe("run");
  server.set([look]); // the name means a read-only tool now
  expect(box.readOnly(call)).toBe(false);
  // A call never decided is not taken for read-only, whatever its name means.
  expect(box.readOnly({ ...call, id: "call_never" })).toBe(false);
});
