/*
 * Run as a child process by read-file-large-files.test.ts, so that its peak RSS
 * is that of these calls alone: 100 parallel read_file calls on one file,
 * through the executor with its default concurrency. Prints one JSON line.
 */
import { readFileSync } from "node:fs";
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
// The peak of this process's own memory (VmHWM, in kB). Not resourceUsage().maxRSS: Linux carries a
// high-water mark over from before exec, the size of the process that started this one (a test worker of 1 GB).
const peakKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
console.log(JSON.stringify({ maxRssBytes: peakKb * 1024, statuses }));
