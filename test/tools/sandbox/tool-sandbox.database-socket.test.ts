/**
 * The threat: a command under bwrap ran, outside its user namespace, as loopd's own
 * uid: a unix socket it can reach sees loopd as its peer (SO_PEERCRED). The
 * database's socket is such a socket: with peer authentication (Debian's
 * default for local connections) or trust, a sandboxed command is the
 * database user loopd is, every tenant's data with it, without DATABASE_URL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { createRunCommandTool } from "../../../src/tools/command/run-command.js";
import { createBwrapSandbox } from "../../../src/tools/sandbox/bwrap-sandbox.js";
import { sandboxSettingsOf } from "../../../src/tools/sandbox/sandbox-config.js";

/** A unix socket server that answers each connection with its peer's uid, as Postgres' peer authentication reads it. */
const PEER_SERVER = `
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    pid, uid, gid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    c.sendall(f"peer-uid={uid}\\n".encode()); c.close()
`;

async function run(command: string, raw: Record<string, string>) {
  const e = {
    DATA_DIR: mkdtempSync("/var/tmp/loopd-data-"),
    TOOLS_FILE: undefined,
    PRICES_FILE: undefined,
    TOOL_SANDBOX: undefined,
    TOOL_RUN_AS_USER: "nobody",
    RUN_COMMAND_TENANTS: undefined,
  };
  const { hidden, home } = sandboxSettingsOf(e, raw);
  const tool = createRunCommandTool({
    timeoutMs: 10_000,
    env: { PATH: "/usr/bin:/bin", HOME: "/" },
    sandbox: createBwrapSandbox({ hidden, home }),
  });
  const workspace = mkdtempSync(path.join(tmpdir(), "loopd-ws-"));
  const ctx = {
    signal: new AbortController().signal,
    workspaceDir: workspace,
    maxResultChars: 20_000,
    toolCallId: "call_1",
    conversationId: null,
    runId: null,
  };
  return (await tool.execute(tool.input.parse({ command }), ctx)) as {
    exit_code: number | null;
    stdout: string;
    stderr: string;
  };
}

describe("the database's unix socket from inside the sandbox", () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill()));

  test("a command cannot connect to the socket named by DATABASE_URL, where it would be taken for loopd's own uid", async () => {
    const socketDir = mkdtempSync("/var/tmp/loopd-pgsock-");
    chmodSync(socketDir, 0o755);
    const socket = path.join(socketDir, ".s.PGSQL.5432");
    const server = spawn("/usr/bin/python3", ["-c", PEER_SERVER, socket], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(server);
    await new Promise<void>((resolve) => server.stdout!.once("data", () => resolve()));
    const client = `node -e 'const s=require("net").connect(${JSON.stringify(socket)});s.on("data",d=>process.stdout.write(d));s.on("error",e=>console.log("refused",e.code))'`;
    const result = await run(client, { DATABASE_URL: `postgres://loopd@/loopd?host=${socketDir}` });
    // Before the fix: "peer-uid=<loopd's uid>": peer authentication would let the command in as loopd's database user.
    expect(result.stdout).not.toContain(`peer-uid=${process.getuid!()}`);
    expect(result.stdout).toMatch(/refused/);
  });

  test.runIf(existsSync("/var/run/postgresql/.s.PGSQL.5432"))(
    "a command cannot query this machine's Postgres through its default socket folder",
    async () => {
      const result = await run(`psql -h /var/run/postgresql -U postgres -d test -Atc 'select current_user'`, {
        DATABASE_URL: "postgres://postgres@/test?host=/var/run/postgresql",
      });
      expect(result.stdout).not.toMatch(/^postgres$/m);
    },
  );
});
