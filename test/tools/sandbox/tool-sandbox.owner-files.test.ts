/**
 * bubblewrap maps the command's uid (nobody inside) to loopd's own outside:
 * file permissions are checked against loopd's uid, so a command reads
 * every file loopd's user owns that `hidden` does not name, mode 0600 or
 * not. With loopd as root (bwrap is still chosen first), that is every
 * root-owned file of the host: /etc/shadow, TLS private keys, other
 * services' configuration. The README says the command runs "as an
 * unprivileged user ... reading what the host lets any user read".
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { createRunCommandTool } from "../../../src/tools/command/run-command.js";
import { chooseToolSandbox } from "../../../src/tools/sandbox/choose-tool-sandbox.js";
import { sandboxSettingsOf } from "../../../src/tools/sandbox/sandbox-config.js";

describe("a command under the sandbox loopd chooses, and files only loopd's user may read", () => {
  test("a 0600 file of loopd's user, not among loopd's settings, is not readable", async () => {
    const dir = mkdtempSync("/var/tmp/loopd-private-");
    const privateFile = path.join(dir, "tls.key");
    writeFileSync(privateFile, "PRIVATE-KEY-not-for-tools\n", { mode: 0o600 });
    const e = {
      DATA_DIR: mkdtempSync("/var/tmp/loopd-data-"),
      TOOLS_FILE: undefined,
      PRICES_FILE: undefined,
      TOOL_SANDBOX: undefined,
      TOOL_RUN_AS_USER: "nobody",
      RUN_COMMAND_TENANTS: undefined,
    };
    const sandbox = chooseToolSandbox({
      settings: sandboxSettingsOf(e, {}),
      runCommand: true,
      programs: [],
      warn: () => {},
    });
    const tool = createRunCommandTool({ timeoutMs: 10_000, env: { PATH: "/usr/bin:/bin", HOME: "/" }, sandbox });
    // A workspace the tools' user may write, as loopd makes it when it runs as root (it hands WORKSPACE_DIR to TOOL_RUN_AS_USER).
    const workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-ws-"));
    chmodSync(workspaceDir, 0o777);
    const ctx = {
      signal: new AbortController().signal,
      workspaceDir,
      maxResultChars: 20_000,
      toolCallId: "call_1",
      conversationId: null,
      runId: null,
    };
    const result = (await tool.execute(
      tool.input.parse({ command: `id -un; cat ${privateFile}; head -c 5 /etc/shadow` }),
      ctx,
    )) as { stdout: string };
    expect(result.stdout).toMatch(/^nobody$/m);
    // Before the fix: the key is printed (and, loopd being root, /etc/shadow's first line).
    expect(result.stdout).not.toContain("PRIVATE-KEY-not-for-tools");
  });
});
