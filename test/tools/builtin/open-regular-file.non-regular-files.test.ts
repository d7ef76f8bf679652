import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolCallBlock } from "../../../src/core/messages.js";
import { createBuiltinTools } from "../../../src/tools/builtin/index.js";
import { createListFilesTool } from "../../../src/tools/builtin/list-files.js";
import { createReadFileTool } from "../../../src/tools/builtin/read-file.js";
import { openRegularFile } from "../../../src/tools/builtin/open-regular-file.js";
import { createSearchFilesTool } from "../../../src/tools/builtin/search-files.js";
import { executeToolCalls, type ToolCallOutcome } from "../../../src/tools/execute-tool-calls.js";
import { createToolRegistry } from "../../../src/tools/tool-registry.js";
import { runTool } from "../run-tool.js";

/*
 * A named pipe (FIFO) in the workspace. Opening one for reading waits for a
 * writer, in one of libuv's four threadpool threads: tools that open it the
 * usual way never answer, and four of them stall every fs call of the
 * process.
 */

let workspaceDir: string;
const fifos: string[] = [];

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(tmpdir(), "loopd-fifo-"));
  await mkdir(path.join(workspaceDir, "folder"));
  await writeFile(path.join(workspaceDir, "folder/note.txt"), "hello\n");
  for (const name of ["pipe", "folder/pipe"]) {
    fifos.push(path.join(workspaceDir, name));
    execFileSync("mkfifo", [path.join(workspaceDir, name)]);
  }
});

afterAll(async () => {
  // Should a tool still be stuck opening a pipe (the bug), give it a writer,
  // so the stuck threads end and the test process can close.
  for (const fifo of fifos) {
    for (let i = 0; i < 16; i++) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        break; // ENXIO: nobody is waiting to read it
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  await rm(workspaceDir, { recursive: true, force: true });
});

const run = (tool: ReturnType<typeof createReadFileTool>, input: unknown) => runTool(tool, input, { workspaceDir });

let nextId = 0;
const call = (name: string, input: Record<string, unknown>): ToolCallBlock => ({
  type: "tool_call",
  id: `call_${++nextId}`,
  name,
  input,
});

async function execute(calls: ToolCallBlock[]): Promise<ToolCallOutcome[]> {
  const outcomes: ToolCallOutcome[] = [];
  // The timeout only bounds the test: a call that hangs on the pipe shows as a timeout, not as the error expected.
  for await (const outcome of executeToolCalls({
    calls,
    registry: createToolRegistry(createBuiltinTools()),
    workspaceDir,
    defaultTimeoutMs: 5_000,
  })) {
    outcomes.push(outcome);
  }
  return outcomes;
}

describe("a named pipe in the workspace", () => {
  it("read_file refuses it as not a regular file", async () => {
    await expect(run(createReadFileTool(), { path: "pipe" })).rejects.toThrow(
      "pipe is not a regular file (it is a named pipe); only regular files can be read",
    );
  });

  it("search_files asked for the pipe by name refuses it as not a regular file", async () => {
    const [outcome] = await execute([call("search_files", { pattern: "x", path: "pipe" })]);
    expect(outcome).toMatchObject({
      status: "error",
      result: { content: "Error: pipe is not a regular file (it is a named pipe); only regular files can be read" },
    });
  });

  it("search_files skips it in a folder and searches the rest", async () => {
    await expect(run(createSearchFilesTool(), { pattern: "hello", path: "." })).resolves.toBe(
      "folder/note.txt:1: hello",
    );
    await expect(run(createSearchFilesTool(), { pattern: "nothing", path: "folder" })).resolves.toBe(
      'no matches for "nothing" in 1 files under folder',
    );
  });

  it("list_files lists it without opening it, and does not take it for a folder", async () => {
    await expect(run(createListFilesTool(), { path: "folder" })).resolves.toEqual({
      path: "folder",
      entries: [
        { name: "note.txt", type: "file", size: 6 },
        { name: "pipe", type: "other" },
      ],
    });
    await expect(run(createListFilesTool(), { path: "pipe" })).rejects.toThrow(
      "pipe is not a folder (nor a regular file)",
    );
  });

  it("many calls on pipes at once all answer, and other fs work goes on meanwhile", async () => {
    const calls = Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0
        ? call("search_files", { pattern: "x", path: i % 4 === 0 ? "pipe" : "folder/pipe" })
        : call("read_file", { path: "pipe" }),
    );
    const outcomes = await execute(calls);
    expect(outcomes.map((o) => [o.status, o.result.content])).toEqual(
      calls.map((c) => ["error", expect.stringContaining(`${c.input.path as string} is not a regular file`)]),
    );
    await expect(readFile(path.join(workspaceDir, "folder/note.txt"), "utf8")).resolves.toBe("hello\n");
  });
});

describe("openRegularFile", () => {
  it("refuses a symbolic link where the resolved path should be a file: one put there after the path was checked", async () => {
    const link = path.join(workspaceDir, "swapped");
    await symlink(path.join(workspaceDir, "folder/note.txt"), link);
    await expect(openRegularFile(link, "swapped")).rejects.toThrow("swapped");
    const { handle, size } = await openRegularFile(path.join(workspaceDir, "folder/note.txt"), "folder/note.txt");
    await handle.close();
    expect(size).toBe(6);
  });
});
