/**
 * With loopd running as root, loopd still chooses bubblewrap first, and
 * bwrap maps the command's "nobody" to uid 0 outside. The kernel checks a
 * non-namespaced sysctl's write against that outside uid, and bwrap leaves
 * its fresh /proc's `sys` writable: the command can write the host's
 * /proc/sys (kernel.core_pattern, kernel.modprobe: the kernel then runs a
 * program of the command's choosing as root, outside every namespace).
 * Proven harmlessly: the current value of kernel.printk_ratelimit_burst (a
 * host-wide setting) is written back unchanged.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { createRunCommandTool } from "../../../src/tools/command/run-command.js";
import { chooseToolSandbox } from "../../../src/tools/sandbox/choose-tool-sandbox.js";
import { sandboxSettingsOf } from "../../../src/tools/sandbox/sandbox-config.js";

describe.runIf(process.getuid?.() === 0)("loopd as root: the sandbox it chooses and the host's sysctls", () => {
  test("a command cannot write a host-wide sysctl", async () => {
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
    const ctx = {
      signal: new AbortController().signal,
      workspaceDir: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
      maxResultChars: 20_000,
      toolCallId: "call_1",
      conversationId: null,
      runId: null,
    };
    const sysctl = "/proc/sys/kernel/printk_ratelimit_burst";
    const command = `v=$(cat ${sysctl}) && echo "$v" > ${sysctl} && echo host-sysctl-written`;
    const result = (await tool.execute(tool.input.parse({ command }), ctx)) as { stdout: string; stderr: string };
    // Before the fix, under bwrap: "host-sysctl-written" (as it would be for kernel.core_pattern).
    expect(result.stdout).not.toContain("host-sysctl-written");
    // The operator's stdio MCP servers run under bwrap as loopd (root here): the host's /proc/sys is read-only to them too.
    const servers = sandbox.forServers ?? sandbox;
    const spawned = servers.confine({ command: "sh", args: ["-c", command], cwd: "/", writable: null });
    const { stdout } = spawnSync(spawned.command, spawned.args, {
      cwd: spawned.cwd,
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(stdout).not.toContain("host-sysctl-written");
  });
});
