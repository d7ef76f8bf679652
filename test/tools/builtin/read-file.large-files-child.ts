/*
 * Run as a child process by read-file-large-files.test.ts, so that its peak RSS
 * is that of these calls alone: 100 parallel read_file calls on one file,
 * through the executor with its default concurrency. Prints one JSON line.
 */
import { createReadFileTool } from "../../../src/tools/builtin/read-file.js";
import { executeToolCalls } from "../../../src/tools/execute-tool-calls.js";
import { createToolRegistry } from "../../../src/tools/tool-registry.js";

const [workspaceDir, file] = process.argv.slice(2);
if (!workspaceDir || !file) throw new Error("usage: read-file-large-files-child.ts <workspaceDir> <file>");

const statuses: Record<string, number> = {};
for await (const outcome of executeToolCalls({
  calls: Array.from({ length: 100 }, (_, i) => ({
    type: "tool_call",
    id: `call_${i}`,
    name: "read_file",
    input: { path: file },
  })),
  registry: createToolRegistry([createReadFileTool()]),
  workspaceDir,
})) {
  statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
}
// maxRSS is in KiB.
console.log(JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, statuses }));
