import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../../../src/tools/builtin/index.js";
import { createListFilesTool } from "../../../src/tools/builtin/list-files.js";
import { createReadFileTool } from "../../../src/tools/builtin/read-file.js";
import { createSearchFilesTool, SEARCH_MAX_MATCHES } from "../../../src/tools/builtin/search-files.js";
import { executeToolCalls } from "../../../src/tools/execute-tool-calls.js";
import { resolveInWorkspace } from "../../../src/tools/resolve-in-workspace.js";
import { createToolRegistry } from "../../../src/tools/tool-registry.js";
import { runTool } from "../run-tool.js";

let base: string;
let workspaceDir: string;
let outsideDir: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "loopd-tools-"));
  workspaceDir = path.join(base, "workspace");
  outsideDir = path.join(base, "outside");
  const files: Record<string, string | Buffer> = {
    "notes/todo.md": "# Todo\n- TODO buy milk\n- todo call mum\n",
    "notes/empty.txt": "",
    "notes/crlf.txt": "one\r\ntwo\r\n",
    "src/a.ts": "export const a = 1; // TODO: rename\n",
    "src/deep/b.ts": "const b = 'TODO';\n",
    "node_modules/pkg/index.js": "// TODO in a dependency\n",
    ".git/config": "TODO in git\n",
    "image.bin": Buffer.from([0x89, 0x50, 0x00, 0x01, 0x54, 0x4f, 0x44, 0x4f]),
    "many.txt": Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join("\n") + "\n",
    "wide.txt": Array.from({ length: 100 }, (_, i) => `${i + 1} ${"w".repeat(500)}`).join("\n"),
    "short-lines.txt": "x\n".repeat(2500),
    "hits.txt": "HIT\n".repeat(SEARCH_MAX_MATCHES + 50),
  };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(workspaceDir, name)), { recursive: true });
    await writeFile(path.join(workspaceDir, name), content);
  }
  await mkdir(outsideDir, { recursive: true });
  await writeFile(path.join(outsideDir, "secret.txt"), "TODO top secret\n");
  await symlink(path.join(outsideDir, "secret.txt"), path.join(workspaceDir, "secret-link"));
  await symlink(outsideDir, path.join(workspaceDir, "outside-link"));
  await symlink(path.join(workspaceDir, "notes/todo.md"), path.join(workspaceDir, "todo-link"));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const run = (tool: ReturnType<typeof createReadFileTool>, input: unknown) => runTool(tool, input, { workspaceDir });

describe("resolveInWorkspace", () => {
  const resolve = (p: string) => resolveInWorkspace({ workspaceDir, path: p });

  it("a workspace folder removed after it was used is reported missing, and found again once it is back", async () => {
    const gone = path.join(base, "removed");
    await mkdir(gone);
    await writeFile(path.join(gone, "a.txt"), "a");
    const resolveIn = (p: string) => resolveInWorkspace({ workspaceDir: gone, path: p });
    expect((await resolveIn("a.txt")).displayPath).toBe("a.txt");
    await rm(gone, { recursive: true });
    await expect(resolveIn("a.txt")).rejects.toThrow("the workspace folder does not exist on the server");
    await expect(resolveIn("b.txt")).rejects.toThrow("the workspace folder does not exist on the server");
    await mkdir(gone);
    await writeFile(path.join(gone, "b.txt"), "b");
    expect((await resolveIn("b.txt")).displayPath).toBe("b.txt");
  });

  it("a root that is a symbolic link pointed elsewhere after use: paths stay within the folder it led to, until one is not found there", async () => {
    const [first, second, link] = ["root-a", "root-b", "root-link"].map((name) => path.join(base, name));
    await mkdir(first!);
    await mkdir(second!);
    await writeFile(path.join(first!, "a.txt"), "a");
    await writeFile(path.join(second!, "b.txt"), "b");
    await symlink(first!, link!);
    const resolveIn = (p: string) => resolveInWorkspace({ workspaceDir: link!, path: p });
    expect((await resolveIn("a.txt")).absolutePath).toBe(path.join(await realpath(first!), "a.txt"));
    await rm(link!);
    await symlink(second!, link!);
    expect((await resolveIn("a.txt")).root).toBe(await realpath(first!));
    await expect(resolveIn("b.txt")).rejects.toThrow("no such file or folder: b.txt");
    expect((await resolveIn("b.txt")).absolutePath).toBe(path.join(await realpath(second!), "b.txt"));
  });

  it("resolves a relative path and shows it relative to the root", async () => {
    const resolved = await resolve("notes/./todo.md");
    expect(resolved.displayPath).toBe("notes/todo.md");
    expect(resolved.absolutePath.endsWith(path.join("notes", "todo.md"))).toBe(true);
    expect((await resolve("")).displayPath).toBe(".");
    expect((await resolve("src/../notes")).displayPath).toBe("notes");
  });

  it.each(["..", "../outside/secret.txt", "notes/../../outside", "src/deep/../../../x"])(
    "refuses %s, which climbs out with ..",
    async (p) => {
      await expect(resolve(p)).rejects.toThrow(`path escapes the workspace: ${p}`);
    },
  );

  it("refuses absolute paths, even one inside the workspace", async () => {
    await expect(resolve("/etc/passwd")).rejects.toThrow("path escapes the workspace: /etc/passwd (absolute paths");
    await expect(resolve(path.join(workspaceDir, "notes/todo.md"))).rejects.toThrow("path escapes the workspace");
  });

  it.each(["secret-link", "outside-link", "outside-link/secret.txt"])(
    "refuses %s, a symbolic link leading outside",
    async (p) => {
      await expect(resolve(p)).rejects.toThrow(`path escapes the workspace: ${p} (a symbolic link leads outside`);
    },
  );

  it("follows a symbolic link that stays inside", async () => {
    const resolved = await resolve("todo-link");
    expect(resolved.absolutePath.endsWith(path.join("notes", "todo.md"))).toBe(true);
  });

  it("names a missing path as the model wrote it, never the server's folders", async () => {
    const error = (await resolve("notes/nope.md").then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toBe("no such file or folder: notes/nope.md (use list_files to see what exists)");
    expect(error.message).not.toContain(base);
  });

  it("says so when the workspace folder itself is missing", async () => {
    await expect(resolveInWorkspace({ workspaceDir: path.join(base, "gone"), path: "." })).rejects.toThrow(
      "the workspace folder does not exist",
    );
  });
});

describe("read_file", () => {
  const tool = createReadFileTool();

  it("returns the lines with their numbers", async () => {
    await expect(run(tool, { path: "notes/todo.md" })).resolves.toBe(
      "1\t# Todo\n2\t- TODO buy milk\n3\t- todo call mum",
    );
    await expect(run(tool, { path: "notes/crlf.txt" })).resolves.toBe("1\tone\n2\ttwo");
  });

  it("reads a window with offset and limit and says where to go on", async () => {
    await expect(run(tool, { path: "many.txt", offset: 10, limit: 3 })).resolves.toBe(
      "10\tline 10\n11\tline 11\n12\tline 12\n[lines 10-12 of 2500 shown; call read_file with offset 13 to read on]",
    );
  });

  it("reads the first 2000 lines by default", async () => {
    const text = (await run(tool, { path: "short-lines.txt" })) as string;
    expect(text.split("\n").at(-2)).toBe("2000\tx");
    expect(text).toMatch(/offset 2001 to read on\]$/);
  });

  it("stops early rather than return more than a tool result may hold", async () => {
    const text = (await run(tool, { path: "wide.txt" })) as string;
    expect(text.length).toBeLessThanOrEqual(16_384);
    const [, last, next] = /\[lines 1-(\d+) of 100 shown; call read_file with offset (\d+)/.exec(text)!;
    expect(Number(next)).toBe(Number(last) + 1);
    expect(Number(last)).toBeLessThan(100);
  });

  it("reports a binary file instead of dumping it", async () => {
    await expect(run(tool, { path: "image.bin" })).rejects.toThrow("image.bin is a binary file (8 bytes)");
  });

  it("explains folders, empty files and offsets past the end", async () => {
    await expect(run(tool, { path: "notes" })).rejects.toThrow("notes is a folder; use list_files");
    await expect(run(tool, { path: "notes/empty.txt" })).resolves.toBe("(notes/empty.txt is empty)");
    await expect(run(tool, { path: "notes/todo.md", offset: 9 })).rejects.toThrow(
      "offset 9 is past the end of notes/todo.md, which has 3 lines",
    );
  });

  it.each(["../outside/secret.txt", "secret-link", "outside-link/secret.txt"])("refuses %s", async (p) => {
    await expect(run(tool, { path: p })).rejects.toThrow("path escapes the workspace");
  });

  it("refuses an absolute path", async () => {
    await expect(run(tool, { path: path.join(outsideDir, "secret.txt") })).rejects.toThrow(
      "path escapes the workspace",
    );
  });
});

describe("list_files", () => {
  const tool = createListFilesTool();

  it("lists folders first, then files with sizes, each sorted, links marked as links", async () => {
    await expect(run(tool, {})).resolves.toEqual({
      path: ".",
      entries: [
        { name: ".git/", type: "directory" },
        { name: "node_modules/", type: "directory" },
        { name: "notes/", type: "directory" },
        { name: "src/", type: "directory" },
        { name: "hits.txt", type: "file", size: 4 * (SEARCH_MAX_MATCHES + 50) },
        { name: "image.bin", type: "file", size: 8 },
        { name: "many.txt", type: "file", size: expect.any(Number) },
        { name: "outside-link", type: "symlink" },
        { name: "secret-link", type: "symlink" },
        { name: "short-lines.txt", type: "file", size: 5000 },
        { name: "todo-link", type: "symlink" },
        { name: "wide.txt", type: "file", size: expect.any(Number) },
      ],
    });
  });

  it("lists a subfolder", async () => {
    await expect(run(tool, { path: "src" })).resolves.toEqual({
      path: "src",
      entries: [
        { name: "deep/", type: "directory" },
        { name: "a.ts", type: "file", size: 36 },
      ],
    });
  });

  it("explains a file given as the folder", async () => {
    await expect(run(tool, { path: "notes/todo.md" })).rejects.toThrow("notes/todo.md is a file, not a folder");
  });

  it.each(["..", "outside-link", "/tmp"])("refuses %s", async (p) => {
    await expect(run(tool, { path: p })).rejects.toThrow("path escapes the workspace");
  });
});

describe("search_files", () => {
  const tool = createSearchFilesTool();

  it("finds a case-sensitive substring as path:line: text, skipping dependencies, git, binaries and links", async () => {
    // Not "todo call mum" (case), node_modules, .git, image.bin (binary) or
    // the secret behind secret-link and outside-link.
    await expect(run(tool, { pattern: "TODO", path: "." })).resolves.toBe(
      [
        "notes/todo.md:2: - TODO buy milk",
        "src/a.ts:1: export const a = 1; // TODO: rename",
        "src/deep/b.ts:1: const b = 'TODO';",
      ].join("\n"),
    );
  });

  it("searches only under the given path", async () => {
    await expect(run(tool, { pattern: "TODO", path: "src" })).resolves.toBe(
      "src/a.ts:1: export const a = 1; // TODO: rename\nsrc/deep/b.ts:1: const b = 'TODO';",
    );
    await expect(run(tool, { pattern: "milk", path: "notes/todo.md" })).resolves.toBe(
      "notes/todo.md:2: - TODO buy milk",
    );
  });

  it("treats /…/flags as a regular expression", async () => {
    await expect(run(tool, { pattern: "/^- todo/i", path: "notes" })).resolves.toBe(
      "notes/todo.md:2: - TODO buy milk\nnotes/todo.md:3: - todo call mum",
    );
  });

  it("matches a regular expression the same way across files, CRLF lines and the match cap", async () => {
    await expect(run(tool, { pattern: "/^(one|two)$/", path: "notes" })).resolves.toBe(
      "notes/crlf.txt:1: one\nnotes/crlf.txt:2: two",
    );
    const literal = (await run(tool, { pattern: "HIT", path: "." })) as string;
    await expect(run(tool, { pattern: "/^HIT$/", path: "." })).resolves.toBe(literal);
    expect(literal.split("\n")).toHaveLength(SEARCH_MAX_MATCHES + 1);
  });

  it("explains an invalid regular expression", async () => {
    await expect(run(tool, { pattern: "/(unclosed/" })).rejects.toThrow("invalid regular expression /(unclosed/:");
  });

  it("stops at the match cap and says so", async () => {
    const text = (await run(tool, { pattern: "HIT", path: "hits.txt" })) as string;
    const lines = text.split("\n");
    expect(lines).toHaveLength(SEARCH_MAX_MATCHES + 1);
    expect(lines.at(-2)).toBe(`hits.txt:${SEARCH_MAX_MATCHES}: HIT`);
    expect(lines.at(-1)).toBe(`[stopped at ${SEARCH_MAX_MATCHES} matches; narrow the pattern or the path]`);
  });

  it("says when nothing matched", async () => {
    await expect(run(tool, { pattern: "no such text", path: "src" })).resolves.toBe(
      'no matches for "no such text" in 2 files under src',
    );
  });

  it.each(["..", "outside-link", "secret-link"])("refuses %s", async (p) => {
    await expect(run(tool, { pattern: "TODO", path: p })).rejects.toThrow("path escapes the workspace");
  });
});

describe("built-in tools through the executor", () => {
  it("registers the five tools in the contract's order, all read-only", () => {
    const tools = createBuiltinTools();
    expect(tools.map((t) => t.name)).toEqual([
      "get_current_time",
      "calculate",
      "read_file",
      "list_files",
      "search_files",
    ]);
    expect(tools.every((t) => t.readOnly)).toBe(true);
    expect(() => createToolRegistry(tools)).not.toThrow();
  });

  it("turns a refused path into an error result the model can read", async () => {
    const outcomes = [];
    for await (const outcome of executeToolCalls({
      calls: [
        { type: "tool_call", id: "call_1", name: "read_file", input: { path: "../outside/secret.txt" } },
        { type: "tool_call", id: "call_2", name: "calculate", input: { expression: "2 ^ 10" } },
      ],
      registry: createToolRegistry(createBuiltinTools()),
      workspaceDir,
    })) {
      outcomes.push(outcome);
    }
    expect(outcomes.map((o) => [o.status, o.result.content])).toEqual([
      ["error", "Error: path escapes the workspace: ../outside/secret.txt"],
      ["ok", '{"expression":"2 ^ 10","result":1024}'],
    ]);
  });
});
