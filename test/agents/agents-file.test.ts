/**
 * AGENTS_FILE: applied at every start (a changed entry a new version, an
 * unchanged one none), its agents readable over HTTP and changed only by
 * the file.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const file = path.join(mkdtempSync(path.join(tmpdir(), "loopd-agents-")), "agents.yaml");
/** The file: `support` with these tools, and acme's `billing` unless left out. */
const write = ({ tools, billing = true }: { tools: string; billing?: boolean }) =>
  writeFileSync(
    file,
    `agents:
  - name: support
    description: Answers customers
    system: You are support.
    provider: openai
    tools: ${tools}
${billing ? "  - name: billing\n    tenant: acme\n    system: You are billing.\n" : ""}`,
  );
write({ tools: "[calculate, get_current_time]" });
const f = useLoopd(() => ({ env: { AGENTS_FILE: file } }));
const call = async (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object) => {
  const res = await f.loopd.app.inject({ method, url, ...(payload && { payload }) });
  return { status: res.statusCode, body: res.json() };
};
const versionsOf = async (name: string) =>
  (await call("GET", `/agents/${name}/versions`)).body.data.map((a: { version: number }) => a.version);

describe("applied at start", () => {
  test("its agents are readable over HTTP, each in its tenant", async () => {
    const support = await call("GET", "/agents/support");
    expect(support.body).toMatchObject({
      name: "support",
      version: 1,
      description: "Answers customers",
      tools: ["calculate", "get_current_time"],
      from_file: true,
    });
    expect((await call("GET", "/agents/billing")).status).toBe(404);
    expect((await f.loopd.services.store.agents.get("acme", "billing"))?.version).toBe(1);
  });

  test("PATCH and DELETE of a file's agent: 409 agent_from_file, nothing changed", async () => {
    const patch = await call("PATCH", "/agents/support", { version: 1, system: "Changed." });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe("agent_from_file");
    const del = await call("DELETE", "/agents/support");
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe("agent_from_file");
    expect((await call("GET", "/agents/support")).body).toMatchObject({ version: 1, archived_at: null });
  });

  test("a conversation starts from a file's agent", async () => {
    const conv = await call("POST", "/conversations", { agent: "support" });
    expect(conv.body).toMatchObject({ agent: { name: "support", version: 1 }, system: "You are support." });
  });

  test("started again on the same file: no new version; on a changed entry: its next version, the others untouched", async () => {
    await f.restart();
    expect(await versionsOf("support")).toEqual([1]);
    write({ tools: "[get_current_time, calculate]" });
    await f.restart();
    expect(await versionsOf("support")).toEqual([2, 1]);
    expect((await call("GET", "/agents/support")).body.tools).toEqual(["get_current_time", "calculate"]);
    expect((await f.loopd.services.store.agents.get("acme", "billing"))?.version).toBe(1);
  });

  test("an agent the file no longer names becomes writable over HTTP", async () => {
    write({ tools: "[get_current_time, calculate]", billing: false });
    await f.restart();
    expect((await f.loopd.services.store.agents.get("acme", "billing"))?.fromFile).toBe(false);
    expect((await call("GET", "/agents/support")).body.from_file).toBe(true);
  });
});

describe("checked when the configuration is read", () => {
  const problemOf = (text: string, name = "bad.yaml") => {
    const bad = path.join(path.dirname(file), name);
    writeFileSync(bad, text);
    try {
      loadConfig({ AGENTS_FILE: bad });
      return null;
    } catch (err) {
      return (err as Error).message.replace(bad, "FILE");
    }
  };

  test.each([
    ["a bad name", "agents:\n  - name: ok\n  - name: Not OK\n", "AGENTS_FILE FILE: agents[1].name: must be 1–48"],
    [
      "an unknown field",
      "agents:\n  - name: a\n    max_step: 3\n",
      "AGENTS_FILE FILE: agents[0].max_step: is not a field",
    ],
    [
      "a bad schema",
      "agents:\n  - name: a\n    finish: {result_schema: {type: object, properties: {x: {pattern: '(?=a)'}}}}\n",
      "AGENTS_FILE FILE: agents[0].finish.result_schema: must be a JSON Schema loopd can check",
    ],
    [
      "the same name twice",
      "agents:\n  - name: a\n  - name: a\n",
      "AGENTS_FILE FILE: agents[1].name: a is also agents[0]'s name",
    ],
    ["no agents list", "other: []\n", "AGENTS_FILE FILE: agents: is required: a list of agents"],
    ["not YAML", "agents: [\n", "AGENTS_FILE FILE: is not YAML or JSON"],
  ])("%s: one line naming the entry and the field", (_what, text, message) => {
    const problem = problemOf(text);
    expect(problem).toContain(message);
    expect(problem).not.toContain("\n");
  });

  test("a JSON file is read as JSON", () => {
    expect(problemOf('{"agents": [{"name": "a", "tools": "calculate"}]}', "bad.json")).toContain(
      "AGENTS_FILE FILE: agents[0].tools:",
    );
  });
});
