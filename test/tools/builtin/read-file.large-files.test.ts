import { spawn } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createReadFileTool, READ_FILE_MAX_BYTES } from "../../../src/tools/builtin/read-file.js";
import { runTool } from "../run-tool.js";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const child = fileURLToPath(new URL("./read-file.large-files-child.ts", import.meta.url));
const MiB = 1024 * 1024;

let workspaceDir: string;

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(tmpdir(), "loopd-read-memory-"));
  // A text file of the largest size read_file accepts, written a line at a time.
  const handle = await open(path.join(workspaceDir, "big.log"), "w");
  const line = Buffer.from(`${"x".repeat(99)}\n`);
  const block = Buffer.concat(Array.from({ length: 1024 }, () => line));
  for (let written = 0; written < READ_FILE_MAX_BYTES; written += block.length) {
    await handle.write(block, 0, Math.min(block.length, READ_FILE_MAX_BYTES - written));
  }
  await handle.close();
  // One byte over the limit, without writing 10 MiB again: a sparse file.
  const over = await open(path.join(workspaceDir, "too-big.log"), "w");
  await over.truncate(READ_FILE_MAX_BYTES + 1);
  await over.close();
});

afterAll(async () => {
  await rm(workspaceDir, { recursive: true, force: true });
});

test("100 parallel read_file calls on a 10 MiB file stay under 150 MiB of RSS", async () => {
  const { maxRssBytes, statuses } = await runChild([child, workspaceDir, "big.log"]);
  expect(statuses).toEqual({ ok: 100 });
  expect(maxRssBytes / MiB).toBeLessThan(150);
});

test("the first lines of a large file come with the file's size, not its line count", async () => {
  const text = (await runTool(createReadFileTool(), { path: "big.log", limit: 2 }, { workspaceDir })) as string;
  expect(text).toBe(
    `1\t${"x".repeat(99)}\n2\t${"x".repeat(99)}\n` +
      `[lines 1-2 shown, more follow (the file has ${READ_FILE_MAX_BYTES} bytes); call read_file with offset 3 to read on]`,
  );
});

test("the last lines of a large file are read to its end", async () => {
  const lineCount = Math.ceil(READ_FILE_MAX_BYTES / 100);
  const lastLength = READ_FILE_MAX_BYTES - (lineCount - 1) * 100;
  await expect(
    runTool(createReadFileTool(), { path: "big.log", offset: lineCount - 1 }, { workspaceDir }),
  ).resolves.toBe(`${lineCount - 1}\t${"x".repeat(99)}\n${lineCount}\t${"x".repeat(lastLength)}`);
  await expect(
    runTool(createReadFileTool(), { path: "big.log", offset: lineCount + 1 }, { workspaceDir }),
  ).rejects.toThrow(`offset ${lineCount + 1} is past the end of big.log, which has ${lineCount} lines`);
});

test("a file over the limit is refused", async () => {
  await expect(runTool(createReadFileTool(), { path: "too-big.log" }, { workspaceDir })).rejects.toThrow(
    `too-big.log is too large to read (${READ_FILE_MAX_BYTES + 1} bytes, limit ${READ_FILE_MAX_BYTES}); use search_files`,
  );
});

/** `node --import tsx <args>` in the repository, resolved with its one JSON line of output. */
function runChild(args: string[]): Promise<{ maxRssBytes: number; statuses: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    proc.once("error", reject);
    proc.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`child exited with ${code}:\n${err}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1)!));
    });
  });
}
