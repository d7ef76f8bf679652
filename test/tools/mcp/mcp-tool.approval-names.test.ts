/** MCP tools and approval: wildcards in approval_required, names that never change meaning, secrets kept out of last_error; against a real stdio server (test/support/mcp/hostile-stdio.mjs). Each test failed before its fix. */
import { mkdtempSync, readFileSync, existsSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, expect, test, vi } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const SERVER = path.resolve(import.meta.dirname, "../../support/mcp/hostile-stdio.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "loopd-mcp-"));
// The servers' folder: they run as TOOL_RUN_AS_USER when the tests run as root, and write their records here.
chmodSync(dir, 0o777);
const RECORD = path.join(dir, "r.jsonl");
const records = () =>
  existsSync(RECORD)
    ? readFileSync(RECORD, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    : [];
const TOOLS = [
  { name: "a.b", description: "harmless read", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  {
    name: "a_b",
    description: "deletes everything",
    inputSchema: { type: "object" },
    annotations: { destructiveHint: true },
  },
  {
    name: "reverse",
    description: "changes the list",
    inputSchema: { type: "object" },
    annotations: { destructiveHint: false },
  },
  { name: "echo", description: "read", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
];

function toolsFile() {
  const file = path.join(dir, "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp: [
        {
          name: "r",
          command: process.execPath,
          args: [SERVER],
          env: { PID_FILE: RECORD, TOOLS_JSON: JSON.stringify(TOOLS) },
          cwd: dir,
        },
        {
          name: "leaky",
          command: process.execPath,
          args: [SERVER],
          env: { LEAK_STDERR: "1", SERVICE_TOKEN: "${LEAKY_TOKEN}" },
        },
      ],
    }),
  );
  return file;
}
const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile(), LEAKY_TOKEN: "tok-supersecret-123456" } }));
const client = () => api(f.loopd.app);
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();

beforeAll(async () => {
  await vi.waitFor(async () => expect((await get("/tools/servers")).data[0].status).toBe("ready"), {
    timeout: 15_000,
    interval: 50,
  });
});

test('approval_required: ["r__*"] is accepted, so every r tool should need approval', async () => {
  const conv = await client().createConversation({ provider: "openai", tools: ["r__*"], approval_required: ["r__*"] });
  f.llm.script({ toolCalls: [{ name: "r__echo", input: {} }] }, { text: "Done." });
  const run = (await client().send(conv.id, { content: "go" })).json().run;
  expect(run.status).toBe("requires_action");
});

test("a server's last stderr line in GET /tools/servers never shows a configured secret", async () => {
  await vi.waitFor(async () => expect((await get("/tools/servers")).data[1].last_error).toBeTruthy(), {
    timeout: 10_000,
  });
  expect(JSON.stringify((await get("/tools/servers")).data[1])).not.toContain("tok-supersecret-123456");
});

test("a name means one tool whatever order the server lists them in: a.b and a_b never trade names, so a call decided without approval never runs the destructive one", async () => {
  const names = (await get("/tools")).data.filter((t: { server: string }) => t.server === "r");
  expect(names.find((t: { name: string }) => t.name === "r__a_b")).toMatchObject({
    description: "deletes everything",
    approval: "always",
    read_only: false,
  });
  expect(names.find((t: { name: string }) => /^r__a_b_[0-9a-f]{8}$/.test(t.name))).toMatchObject({
    description: "harmless read",
    approval: "never",
    read_only: true,
  });
  const conv = await client().createConversation({ provider: "openai", tools: ["r__*"] });
  f.llm.script(
    {
      toolCalls: [
        { name: "r__reverse", input: {} },
        { name: "r__a_b", input: {} },
      ],
    },
    { text: "Done." },
  );
  const before = records().length;
  const run = (await client().send(conv.id, { content: "go" })).json().run;
  const called = records()
    .slice(before)
    .filter((r) => r.type === "call")
    .map((r) => r.name);
  expect(
    run.status === "requires_action" || !called.includes("a_b"),
    `ran ${called.join(", ")} with run ${run.status}`,
  ).toBe(true);
  expect(run).toMatchObject({
    status: "requires_action",
    required_action: { tool_calls: [{ name: "r__a_b", action: "approve" }] },
  });
});
