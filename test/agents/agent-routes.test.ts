/**
 * Agents over HTTP: made, checked as a conversation's configuration,
 * versioned with optimistic concurrency, archived; conversations pinned to
 * a version with their overrides, moved between runs; runs and usage name
 * the version they ran with.
 */
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

let keys: Record<string, string> | null = null;
const keyOf = async (tenant: string) => {
  keys ??= {};
  keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key;
  return keys[tenant];
};
type Method = "GET" | "POST" | "PATCH" | "DELETE";
const call = async (method: Method, url: string, payload?: object, tenant = "acme") => {
  const res = await f.loopd.app.inject({
    method,
    url,
    ...(payload && { payload }),
    headers: { authorization: `Bearer ${await keyOf(tenant)}` },
  });
  return { status: res.statusCode, body: res.json() };
};
const agent = (name: string, fields: object = {}) =>
  call("POST", "/agents", { name, system: "You are support.", provider: "openai", tools: ["calculate"], ...fields });

describe("POST /agents", () => {
  test("makes version 1 with the configuration as given", async () => {
    const res = await agent("support", { description: "Answers", budget: { max_steps: 4 } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "support",
      version: 1,
      description: "Answers",
      system: "You are support.",
      provider: "openai",
      tools: ["calculate"],
      budget: { max_steps: 4 },
      archived_at: null,
      from_file: false,
    });
    expect(res.body.id).toMatch(/^agt_/);
  });

  test.each([
    ["a bad name", { name: "Support Team" }, "body.name"],
    ["a name too long", { name: "a".repeat(49) }, "body.name"],
    ["an unknown tool", { name: "x1", tools: ["calculate", "no_such_tool"] }, "body.tools"],
    [
      "a bad schema",
      { name: "x2", client_tools: [{ name: "lookup", input_schema: { type: "string" } }] },
      "body.client_tools[0].input_schema",
    ],
    ["an unknown field", { name: "x3", max_step: 3 }, "body.max_step"],
    [
      "approval for a tool it does not have",
      { name: "x4", tools: ["calculate"], approval_required: ["read_file"] },
      "body.approval_required",
    ],
  ])("%s: 400 naming the field", async (_what, body, field) => {
    const res = await call("POST", "/agents", body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details.field).toBe(field);
  });

  test("a second agent by a name the tenant has: 409 agent_exists; another tenant may take it", async () => {
    await agent("dup");
    const again = await agent("dup");
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "agent_exists", details: { field: "body.name" } });
    expect((await call("POST", "/agents", { name: "dup" }, "beta")).status).toBe(201);
  });
});

describe("PATCH /agents/:name", () => {
  test("a change makes the next version; the old one stays as it was; the same configuration makes none", async () => {
    await agent("versioned");
    const changed = await call("PATCH", "/agents/versioned", { version: 1, system: "Be brief." });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ version: 2, system: "Be brief.", tools: ["calculate"] });
    const same = await call("PATCH", "/agents/versioned", { version: 2, system: "Be brief.", tools: ["calculate"] });
    expect(same.body.version).toBe(2);
    expect((await call("GET", "/agents/versioned/versions/1")).body.system).toBe("You are support.");
    const versions = await call("GET", "/agents/versioned/versions");
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  test("a stale version: 409 version_conflict with the current version, and nothing written", async () => {
    await agent("stale");
    await call("PATCH", "/agents/stale", { version: 1, system: "Two." });
    const res = await call("PATCH", "/agents/stale", { version: 1, system: "Three." });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "version_conflict", details: { current_version: 2 } });
    expect((await call("GET", "/agents/stale")).body).toMatchObject({ version: 2, system: "Two." });
  });

  test("the tools in another order are a new version", async () => {
    await agent("order", { tools: ["calculate", "get_current_time"] });
    const res = await call("PATCH", "/agents/order", { version: 1, tools: ["get_current_time", "calculate"] });
    expect(res.body).toMatchObject({ version: 2, tools: ["get_current_time", "calculate"] });
  });

  test("a change is checked as a conversation's: an unknown tool is a 400 naming it, and no version", async () => {
    await agent("checked");
    const res = await call("PATCH", "/agents/checked", { version: 1, tools: ["nope"] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body.tools");
    expect((await call("GET", "/agents/checked")).body.version).toBe(1);
  });

  test("without version: 400", async () => {
    await agent("noversion");
    const res = await call("PATCH", "/agents/noversion", { system: "x" });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body.version");
  });
});

describe("lists", () => {
  test("GET /agents: newest first, paged with a cursor, only the tenant's", async () => {
    for (const name of ["page-a", "page-b", "page-c"]) await call("POST", "/agents", { name }, "pager");
    const first = await call("GET", "/agents?limit=2", undefined, "pager");
    expect(first.body.data.map((a: { name: string }) => a.name)).toEqual(["page-c", "page-b"]);
    const next = await call("GET", `/agents?limit=2&cursor=${first.body.next_cursor}`, undefined, "pager");
    expect(next.body).toMatchObject({ data: [{ name: "page-a" }], next_cursor: null });
  });

  test("versions page newest first", async () => {
    await call("POST", "/agents", { name: "many" }, "pager");
    for (let v = 1; v <= 3; v++) await call("PATCH", "/agents/many", { version: v, system: `v${v + 1}` }, "pager");
    const first = await call("GET", "/agents/many/versions?limit=3", undefined, "pager");
    expect(first.body.data.map((a: { version: number }) => a.version)).toEqual([4, 3, 2]);
    const next = await call(
      "GET",
      `/agents/many/versions?limit=3&cursor=${first.body.next_cursor}`,
      undefined,
      "pager",
    );
    expect(next.body).toMatchObject({ data: [{ version: 1 }], next_cursor: null });
  });
});

describe("another tenant's agent", () => {
  test("answers as an unknown one: on its routes, and when a conversation names it", async () => {
    await agent("private");
    expect((await call("GET", "/agents/private", undefined, "beta")).status).toBe(404);
    expect((await call("GET", "/agents/private/versions/1", undefined, "beta")).status).toBe(404);
    expect((await call("PATCH", "/agents/private", { version: 1, system: "x" }, "beta")).status).toBe(404);
    expect((await call("DELETE", "/agents/private", undefined, "beta")).status).toBe(404);
    const conv = await call("POST", "/conversations", { agent: "private" }, "beta");
    expect(conv.status).toBe(400);
    expect(conv.body.error).toMatchObject({
      message: "agent private does not exist",
      details: { field: "body.agent" },
    });
  });
});

describe("conversations from an agent", () => {
  test("pinned to the latest version or a named one, overrides shown and applied", async () => {
    await agent("pin", { metadata: { team: "a" } });
    await call("PATCH", "/agents/pin", { version: 1, system: "Version two." });
    const latest = await call("POST", "/conversations", { agent: "pin", title: "Hi", model: "gpt-4o" });
    expect(latest.status).toBe(201);
    expect(latest.body).toMatchObject({
      agent: { name: "pin", version: 2 },
      agent_overrides: { model: "gpt-4o" },
      title: "Hi",
      system: "Version two.",
      provider: "openai",
      model: "gpt-4o",
      tools: ["calculate"],
      metadata: { team: "a" },
    });
    const older = await call("POST", "/conversations", { agent: { name: "pin", version: 1 } });
    expect(older.body).toMatchObject({
      agent: { name: "pin", version: 1 },
      agent_overrides: {},
      system: "You are support.",
    });
    const plain = await call("POST", "/conversations", {});
    expect(plain.body).toMatchObject({ agent: null, agent_overrides: null });
  });

  test("an unknown agent or version: 400 naming agent", async () => {
    await agent("known");
    const unknown = await call("POST", "/conversations", { agent: "unknown" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe("body.agent");
    const version = await call("POST", "/conversations", { agent: { name: "known", version: 7 } });
    expect(version.status).toBe(400);
    expect(version.body.error.details).toMatchObject({ field: "body.agent", latest_version: 1 });
  });

  test("a run records the version it ran with; PATCH agent_version moves the conversation between runs, not during one", async () => {
    await agent("mover", { approval_required: ["calculate"] });
    await call("PATCH", "/agents/mover", { version: 1, system: "Second." });
    const conv = (await call("POST", "/conversations", { agent: { name: "mover", version: 1 }, title: "Mine" })).body;
    f.llm.script({ text: "Hello." });
    const first = (await call("POST", `/conversations/${conv.id}/messages`, { content: "Hi" })).body;
    expect(first.run).toMatchObject({ status: "completed", agent: { name: "mover", version: 1 } });
    const trace = await call("GET", `/conversations/${conv.id}/runs/${first.run.id}/trace`);
    expect(trace.body.run.agent).toEqual({ name: "mover", version: 1 });

    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const paused = (await call("POST", `/conversations/${conv.id}/messages`, { content: "Add." })).body;
    expect(paused.run.status).toBe("requires_action");
    const busy = await call("PATCH", `/conversations/${conv.id}`, { agent_version: 2 });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: "conversation_busy", details: { active_run_id: paused.run.id } });
    await call("POST", `/conversations/${conv.id}/runs/${paused.run.id}/cancel`, {});

    const moved = await call("PATCH", `/conversations/${conv.id}`, { agent_version: 2 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ agent: { name: "mover", version: 2 }, system: "Second.", title: "Mine" });
    const unknown = await call("PATCH", `/conversations/${conv.id}`, { agent_version: 9 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe("body.agent_version");
    f.llm.script({ text: "Again." });
    const third = (await call("POST", `/conversations/${conv.id}/messages`, { content: "Hi again" })).body;
    expect(third.run.agent).toEqual({ name: "mover", version: 2 });
    expect(f.llm.requests.at(-1)!.body.messages[0]).toMatchObject({ role: "system", content: "Second." });
  });

  test("an override given later is kept when the conversation moves to another version", async () => {
    await agent("keeps");
    await call("PATCH", "/agents/keeps", { version: 1, system: "Two." });
    const conv = (await call("POST", "/conversations", { agent: { name: "keeps", version: 1 } })).body;
    await call("PATCH", `/conversations/${conv.id}`, { model: "gpt-4o" });
    const moved = await call("PATCH", `/conversations/${conv.id}`, { agent_version: 2 });
    expect(moved.body).toMatchObject({ system: "Two.", model: "gpt-4o", agent_overrides: { model: "gpt-4o" } });
  });

  test("a conversation without an agent cannot take agent_version", async () => {
    const conv = (await call("POST", "/conversations", {})).body;
    const res = await call("PATCH", `/conversations/${conv.id}`, { agent_version: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body.agent_version");
  });

  test("an archived agent: 409 agent_archived for a new conversation; one already started still runs", async () => {
    await agent("retired");
    const conv = (await call("POST", "/conversations", { agent: "retired" })).body;
    const archived = await call("DELETE", "/agents/retired");
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).not.toBeNull();
    const refused = await call("POST", "/conversations", { agent: "retired" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "agent_archived", details: { field: "body.agent" } });
    f.llm.script({ text: "Still here." });
    const sent = await call("POST", `/conversations/${conv.id}/messages`, { content: "Hi" });
    expect(sent.body.run).toMatchObject({ status: "completed", agent: { name: "retired", version: 1 } });
  });
});

describe("GET /usage?group_by=agent", () => {
  test("adds agent and agent_version to each row; runs without an agent have null", async () => {
    await call("POST", "/agents", { name: "counted", provider: "openai" }, "usage");
    await call("PATCH", "/agents/counted", { version: 1, system: "Two." }, "usage");
    const pinned = (await call("POST", "/conversations", { agent: { name: "counted", version: 1 } }, "usage")).body;
    const latest = (await call("POST", "/conversations", { agent: "counted" }, "usage")).body;
    const plain = (await call("POST", "/conversations", { provider: "openai" }, "usage")).body;
    for (const conv of [pinned, latest, latest, plain]) {
      f.llm.script({ text: "Hi." });
      await call("POST", `/conversations/${conv.id}/messages`, { content: "Hi" }, "usage");
    }
    const rows = (await call("GET", "/usage?group_by=agent", undefined, "usage")).body.data;
    expect(rows.map((r: any) => [r.agent, r.agent_version, r.runs])).toEqual([
      ["counted", 1, 1],
      ["counted", 2, 2],
      [null, null, 1],
    ]);
    const plainRows = (await call("GET", "/usage", undefined, "usage")).body.data;
    expect(plainRows).toHaveLength(1);
    expect(plainRows[0]).not.toHaveProperty("agent");
  });
});

describe("metrics", () => {
  test("model calls, tokens and ended runs carry the agent's name; a run without one, an empty label", async () => {
    await agent("metered");
    for (const body of [{ agent: "metered" }, { provider: "openai" }]) {
      const conv = (await call("POST", "/conversations", body)).body;
      f.llm.script({ text: "Counted." });
      await call("POST", `/conversations/${conv.id}/messages`, { content: "Hi" });
    }
    const text = (await f.loopd.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(text).toMatch(/loopd_model_calls_total\{[^}]*agent="metered"[^}]*\} 1/);
    expect(text).toMatch(/loopd_tokens_total\{[^}]*agent="metered"[^}]*\}/);
    expect(text).toMatch(/loopd_runs_ended_total\{status="completed",stop_reason="end_turn",agent="metered"\} 1/);
    expect(text).toMatch(/loopd_runs_ended_total\{[^}]*agent=""\}/);
  });
});
