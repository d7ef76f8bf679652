/**
 * The tool sandbox: which one loopd chooses (and when it refuses to start),
 * and what a command sees and may write in it, bwrap against none.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { OperatorError } from "../../../src/errors.js";
import { createRunCommandTool } from "../../../src/tools/command/run-command.js";
import { createBwrapSandbox } from "../../../src/tools/sandbox/bwrap-sandbox.js";
import { chooseToolSandbox, type ChooseSandboxOptions } from "../../../src/tools/sandbox/choose-tool-sandbox.js";
import { sandboxSettingsOf } from "../../../src/tools/sandbox/sandbox-config.js";
import { NO_SANDBOX, type ToolSandbox } from "../../../src/tools/sandbox/tool-sandbox.js";

const settings = (mode: "bwrap" | "user" | "none" | null = null) => ({
  mode,
  runAsUser: "nobody",
  hidden: [],
  home: undefined,
  runCommandTenants: null,
});
const choose = (options: Partial<ChooseSandboxOptions> & { warnings?: string[] }) =>
  chooseToolSandbox({
    settings: settings(),
    runCommand: true,
    programs: [],
    warn: (m) => options.warnings?.push(m),
    isRoot: false,
    idsOf: () => ({ uid: 65534, gid: 65534 }),
    works: () => true,
    ...options,
  });

describe("choosing the sandbox", () => {
  test("bwrap when it works; else, as root, the user sandbox; with neither and run_command on, the start is refused", () => {
    expect(choose({}).kind).toBe("bwrap");
    expect(choose({ works: (s) => s.kind === "user", isRoot: true }).kind).toBe("user");
    expect(() => choose({ works: () => false })).toThrow(OperatorError);
    expect(() => choose({ works: () => false })).toThrow(
      /^ENABLE_RUN_COMMAND=true, but commands cannot be confined here: .*set TOOL_SANDBOX=none/,
    );
    expect(() => choose({ works: (s) => s.kind === "user", isRoot: false })).toThrow(
      /ENABLE_RUN_COMMAND=true, but commands cannot be confined/,
    );
  });

  test("TOOL_SANDBOX=none starts without a sandbox, and without probing one", () => {
    let probed = false;
    expect(choose({ settings: settings("none"), works: () => (probed = true) })).toBe(NO_SANDBOX);
    expect(probed).toBe(false);
  });

  test("an explicit TOOL_SANDBOX that cannot work here is refused, run_command on or not", () => {
    expect(() => choose({ settings: settings("bwrap"), works: () => false, runCommand: false })).toThrow(
      /^TOOL_SANDBOX=bwrap, but bubblewrap cannot run here/,
    );
    expect(() => choose({ settings: settings("user"), isRoot: false })).toThrow(
      /^TOOL_SANDBOX=user needs loopd to run as root/,
    );
    expect(() => choose({ settings: settings("user"), isRoot: true, idsOf: () => null })).toThrow(
      /TOOL_RUN_AS_USER=nobody/,
    );
    expect(choose({ settings: settings("user"), isRoot: true }).kind).toBe("user");
  });

  test("stdio MCP servers alone, with no sandbox possible, run unconfined with a warning, not a refusal", () => {
    const warnings: string[] = [];
    expect(choose({ works: () => false, runCommand: false, programs: ["stdio MCP servers"], warnings })).toBe(
      NO_SANDBOX,
    );
    expect(warnings).toEqual([expect.stringMatching(/^stdio MCP servers run unconfined/)]);
  });

  test("covers loopd's data, its .env, the files its settings name, /run/secrets and the database's socket folders", () => {
    const e = {
      DATA_DIR: "./data",
      TOOLS_FILE: "tools.json",
      PRICES_FILE: undefined,
      TOOL_SANDBOX: undefined,
      TOOL_RUN_AS_USER: "nobody",
      RUN_COMMAND_TENANTS: undefined,
    };
    const { hidden } = sandboxSettingsOf(
      e,
      {
        DB_PASSWORD_FILE: "/run/keys/db",
        ADMIN_TOKEN_FILE: "/run/keys/admin",
        SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
        HOME: "/home/loopd",
        DATABASE_URL: "postgres://loopd@/loopd?host=/srv/pg-socket",
      },
      { cwd: "/srv/loopd" },
    );
    // The CA bundle is not a secret: tools need it to reach HTTPS.
    expect(hidden).not.toContain("/etc/ssl/certs/ca-certificates.crt");
    expect(hidden).toEqual(
      expect.arrayContaining([
        "/run/keys/db",
        "/run/keys/admin",
        "/run/postgresql",
        "/run/secrets",
        "/srv/loopd/.env",
        "/srv/loopd/data",
        "/srv/loopd/tools.json",
        "/srv/pg-socket",
      ]),
    );
    // Where /var/run is /run, one folder is covered once, by its real name.
    expect(hidden.filter((p) => p.endsWith("/postgresql")).length).toBe(
      existsSync("/run/postgresql") && realpathSync("/var/run/postgresql") === "/run/postgresql" ? 1 : 2,
    );
    const inHost = sandboxSettingsOf(
      e,
      { DATABASE_URL: "postgres://loopd@%2Fsrv%2Fsock/loopd" },
      { cwd: "/srv/loopd" },
    ).hidden;
    expect(inHost).toContain("/srv/sock");
  });
});

/** Runs `command` through run_command confined by `sandbox`, in `workspaceDir`. */
async function run(sandbox: ToolSandbox, command: string, workspaceDir: string) {
  const tool = createRunCommandTool({
    timeoutMs: 10_000,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" },
    sandbox,
  });
  const ctx = {
    signal: new AbortController().signal,
    workspaceDir,
    maxResultChars: 20_000,
    toolCallId: "call_1",
    conversationId: null,
    runId: null,
  };
  return (await tool.execute(tool.input.parse({ command }), ctx)) as {
    exit_code: number | null;
    stdout: string;
    stderr: string;
    timed_out: boolean;
  };
}

describe("a command in the sandbox", () => {
  // Not under /tmp, which the sandbox replaces whole: these must be hidden, or read-only, by the sandbox's own rules.
  const secretDir = mkdtempSync("/var/tmp/loopd-secret-");
  const secretFile = path.join(secretDir, "db-password");
  writeFileSync(secretFile, "hunter2-not-for-tools");
  const outside = mkdtempSync("/var/tmp/loopd-outside-");
  const bwrap = createBwrapSandbox({ hidden: [secretDir], home: undefined });

  test("under bwrap: only the workspace is writable, loopd's hidden files read as nothing, and it sees only its own processes", async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), "loopd-ws-"));
    const outsideFile = path.join(outside, "escaped.txt");
    const result = await run(
      bwrap,
      `echo kept > kept.txt; echo x > ${outsideFile}; cat ${secretFile}; ls ${outside} > /dev/null && echo outside-readable; ls /proc | grep -c '^[0-9]'; id -u`,
      workspace,
    );
    expect(readFileSync(path.join(workspace, "kept.txt"), "utf8")).toBe("kept\n");
    expect(() => readFileSync(outsideFile)).toThrow(/ENOENT/);
    expect(result.stdout).not.toContain("hunter2");
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(result.stdout).toMatch(/^outside-readable$/m);
    // sh, ls, grep, id and bwrap's own init: a handful, never the host's processes.
    const [count, uid] = result.stdout.trim().split("\n").slice(-2).map(Number);
    expect(count).toBeLessThan(8);
    expect(uid).toBe(65534);
  });

  test("with TOOL_SANDBOX=none it still runs, as loopd, seeing what loopd sees", async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), "loopd-ws-"));
    const result = await run(NO_SANDBOX, `pwd; cat ${secretFile}`, workspace);
    expect(result).toEqual({
      exit_code: 0,
      stdout: `${workspace}\nhunter2-not-for-tools`,
      stderr: "",
      timed_out: false,
    });
  });
});
