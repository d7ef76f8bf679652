/**
 * The MCP servers of TOOLS_FILE are shared by every tenant, and what a server
 * writes to stderr may hold the arguments of any tenant's call: a tenant sees
 * a server's status and exit code, never that text (neither in
 * `GET /tools/servers` nor in what its own calls answer while the server is
 * down); `ADMIN_TOKEN` holders see it on `GET /admin/tools/servers`.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, expect, test, vi } from "vitest";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const SERVER = path.resolve(import.meta.dirname, "../../support/mcp/stderr-crash-server.mjs");
const ADMIN_TOKEN = "admin-token-0123456789abcdef";
/** What tenant acme sends to the tool: nobody else may read it. */
const ACME_SECRET = "acme-private-order-4711";

function toolsFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "loopd-stderr-"));
  // Its folder (cwd): the one it may write in the sandbox, as TOOL_RUN_AS_USER when the tests run as root; it keeps its state here.
  chmodSync(dir, 0o777);
  const file = path.join(dir, "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp: [
        {
          name: "vault",
          command: process.execPath,
          args: [SERVER],
          env: { STATE_FILE: path.join(dir, "state") },
          cwd: dir,
          approval: "never",
        },
      ],
    }),
  );
  return file;
}

const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile(), API_KEYS_REQUIRED: "true", ADMIN_TOKEN } }));
const call = (key: string, method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });
type Server = {
  name: string;
  status: string;
  restarts: number;
  exit_code: number | null;
  last_error: string | null;
  stderr?: string | null;
};
const vaultOf = async (key: string, url = "/tools/servers"): Promise<Server> =>
  (await call(key, "GET", url)).json().data.find((s: Server) => s.name === "vault");

/** Has the model call `vault__save` with `input` for the key's tenant; the tool's result. */
async function save(key: string, input: Record<string, unknown>): Promise<{ is_error: boolean; content: string }> {
  const conv = (await call(key, "POST", "/conversations", { provider: "openai", tools: ["vault__*"] })).json();
  f.llm.script({ toolCalls: [{ name: "vault__save", input }] }, { text: "Done." });
  expect((await call(key, "POST", `/conversations/${conv.id}/messages`, { content: "Save it." })).statusCode).toBe(200);
  const history = (await call(key, "GET", `/conversations/${conv.id}/messages`)).json().data;
  return history.find((m: { role: string }) => m.role === "tool").content[0];
}

let acme = "";
let beta = "";
beforeAll(async () => {
  acme = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  beta = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
  await vi.waitFor(async () => expect((await vaultOf(acme)).status).toBe("ready"), { timeout: 20_000, interval: 50 });
  // A call the schema refuses (the server is not reached): the schema checker is started before the call that counts.
  expect(await save(acme, {})).toMatchObject({
    is_error: true,
    content: expect.stringMatching(/^invalid arguments for vault__save/),
  });
  // acme's call makes the server write acme's arguments to stderr and exit; each restart fails saying them again.
  expect(await save(acme, { text: ACME_SECRET })).toMatchObject({
    is_error: true,
    content: "the MCP server vault is unavailable (exited with code 1); try again later or use another tool",
  });
  // Its first restart (after 1 s) has come and failed (code 3): the stderr now on record is the restart's.
  await vi.waitFor(async () => expect((await vaultOf(beta)).last_error).toMatch(/^exited with code 3/), {
    timeout: 10_000,
    interval: 50,
  });
});

test("another tenant's GET /tools/servers shows the status and exit code, never what the server wrote", async () => {
  const res = await call(beta, "GET", "/tools/servers");
  expect(res.body).not.toContain(ACME_SECRET);
  expect(res.json().data).toEqual([
    {
      name: "vault",
      transport: "stdio",
      status: "restarting",
      tools: 1,
      restarts: 1,
      exit_code: 3,
      last_error: "exited with code 3",
    },
  ]);
});

test("another tenant's call to the down server answers it is unavailable, without what the server wrote", async () => {
  const result = await save(beta, { text: "beta's own" });
  expect(result).toMatchObject({
    is_error: true,
    content: "the MCP server vault is unavailable (exited with code 3); try again later or use another tool",
  });
});

test("ADMIN_TOKEN sees the server's last stderr line on GET /admin/tools/servers; a tenant's key is refused there", async () => {
  expect(await vaultOf(ADMIN_TOKEN, "/admin/tools/servers")).toMatchObject({
    status: "restarting",
    exit_code: 3,
    last_error: "exited with code 3",
    stderr: `still failing on {"text":"${ACME_SECRET}"}`,
  });
  expect((await call(acme, "GET", "/admin/tools/servers")).statusCode).toBe(401);
});
