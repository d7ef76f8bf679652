/**
 * RUN_COMMAND_TENANTS: a tenant it does not list is never offered
 * run_command: not in GET /tools, refused (400, as any unknown tool) in a
 * conversation's tools, and not run by its runs even from a conversation
 * that named it before.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd({
  env: {
    API_KEYS_REQUIRED: "true",
    MOCK_PROVIDER: "true",
    ENABLE_RUN_COMMAND: "true",
    RUN_COMMAND_TENANTS: "acme, globex",
  },
});
type Method = "GET" | "POST";
const call = (key: string, method: Method, url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });

let acme = "";
let beta = "";
beforeAll(async () => {
  acme = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  beta = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
});

describe("run_command for the tenants RUN_COMMAND_TENANTS lists", () => {
  test("GET /tools shows it to a listed tenant only", async () => {
    const names = async (key: string) =>
      (await call(key, "GET", "/tools")).json().data.map((t: { name: string }) => t.name);
    expect(await names(acme)).toContain("run_command");
    const others = await names(beta);
    expect(others).not.toContain("run_command");
    expect(others).toContain("calculate");
  });

  test("a conversation of another tenant naming it is refused as an unknown tool, and nothing is saved", async () => {
    const res = await call(beta, "POST", "/conversations", { tools: ["calculate", "run_command"] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: "invalid_request",
      details: { field: "body.tools", unknown: ["run_command"] },
    });
    expect(res.json().error.details.available).not.toContain("run_command");
    expect((await call(beta, "GET", "/conversations")).json().data).toEqual([]);
    expect((await call(acme, "POST", "/conversations", { tools: ["run_command"] })).statusCode).toBe(201);
  });

  test("a run of another tenant is not offered it and does not run it, even from a conversation saved with it", async () => {
    // Saved as if the tenant had been listed when it was made.
    const conv = await f.loopd.services.store.conversations.create({
      tenantId: "beta",
      title: null,
      system: null,
      provider: "openai",
      model: "gpt-4o-mini",
      tools: ["run_command", "calculate"],
      metadata: {},
    });
    const marker = path.join(f.loopd.config.tools.workspaceDir, "beta-ran.txt");
    f.llm.script(
      { toolCalls: [{ name: "run_command", input: { command: `echo ran > ${marker}` } }] },
      { text: "Done." },
    );
    const sent = await call(beta, "POST", `/conversations/${conv.id}/messages`, { content: "Run it." });
    // No approval asked: the call is to an unknown tool, answered so, never run.
    expect(sent.json().run).toMatchObject({ status: "completed" });
    const offered = (f.llm.requests[0]!.body.tools as { function?: { name: string }; name?: string }[]).map(
      (t) => t.function?.name ?? t.name,
    );
    expect(offered).toEqual(["calculate"]);
    const results = (await call(beta, "GET", `/conversations/${conv.id}/messages`))
      .json()
      .data.filter((m: { role: string }) => m.role === "tool");
    expect(results[0].content[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/unknown tool/i) });
    expect(existsSync(marker)).toBe(false);
  });
});
