/**
 * TOOL_SANDBOX=user (loopd as root, no bubblewrap) runs a command as
 * TOOL_RUN_AS_USER, but covers none of `hidden`: loopd's `.env`, the files
 * its `*_FILE` settings name and `/run/secrets` are read by whoever their
 * modes let read them, and such files are commonly world-readable (0644 by
 * umask, Docker's secrets 0444). The README says that "either way" a tool
 * cannot read them.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { createRunCommandTool } from "../../../src/tools/command/run-command.js";
import { sandboxSettingsOf } from "../../../src/tools/sandbox/sandbox-config.js";
import { chooseToolSandbox } from "../../../src/tools/sandbox/choose-tool-sandbox.js";

describe.runIf(process.getuid?.() === 0)("the user sandbox and loopd's secret files", () => {
  test("a command run as TOOL_RUN_AS_USER cannot read loopd's .env nor a *_FILE secret", async () => {
    const home = mkdtempSync("/var/tmp/loopd-home-");
    chmodSync(home, 0o755);
    writeFileSync(path.join(home, ".env"), "OPENAI_API_KEY=sk-env-not-for-tools\n", { mode: 0o644 });
    const keyFile = path.join(home, "openai_key");
    writeFileSync(keyFile, "sk-file-not-for-tools\n", { mode: 0o444 });
    const e = {
      DATA_DIR: path.join(home, "data"),
      TOOLS_FILE: undefined,
      PRICES_FILE: undefined,
      TOOL_SANDBOX: "user" as const,
      TOOL_RUN_AS_USER: "nobody",
      RUN_COMMAND_TENANTS: undefined,
    };
    const settings = sandboxSettingsOf(e, { OPENAI_API_KEY_FILE: keyFile }, { cwd: home });
    expect(settings.hidden).toEqual(expect.arrayContaining([path.join(home, ".env"), keyFile]));
    const sandbox = chooseToolSandbox({ settings, runCommand: true, programs: [], warn: () => {} });
    expect(sandbox.kind).toBe("user");
    const tool = createRunCommandTool({ timeoutMs: 10_000, env: { PATH: "/usr/bin:/bin", HOME: "/" }, sandbox });
    const ctx = {
      signal: new AbortController().signal,
      workspaceDir: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
      maxResultChars: 20_000,
      toolCallId: "call_1",
      conversationId: null,
      runId: null,
    };
    const result = (await tool.execute(tool.input.parse({ command: `id -un; cat ${home}/.env ${keyFile}` }), ctx)) as {
      stdout: string;
    };
    expect(result.stdout).toMatch(/^nobody$/m);
    // Before the fix, both secrets were printed.
    expect(result.stdout).not.toMatch(/sk-env-not-for-tools|sk-file-not-for-tools/);
  });
});
