/**
 * Agents calling agents: `agents` offers `agent__<name>`, whose call runs the
 * agent in a child conversation and hands its end back as the call's result.
 * The child's pause pauses the parent (answered there, carried to the child),
 * cancelling the parent cancels the child, usage is the parent's and counted
 * once by /usage, depth is bounded (MAX_AGENT_DEPTH 2 in this file).
 */
import { describe, expect, test, vi } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { deleteNoteTool, effects } from "../support/helpers/action-tools.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({
  env: { MAX_AGENT_DEPTH: "2" },
  tools: [...createBuiltinTools(), deleteNoteTool()],
});

const client = () => api(f.loopd.app);
const inject = async (method: "GET" | "POST" | "PATCH", url: string, payload?: object) => {
  const res = await f.loopd.app.inject({ method, url, ...(payload && { payload }) });
  return { status: res.statusCode, body: res.json() };
};
const get = async (url: string) => (await inject("GET", url)).body;
const usage = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0 });
/** Every token of the tenant's use today, as /usage counts it. */
const usedToday = async () => {
  const day = new Date().toISOString().slice(0, 10);
  const rows: Array<{ input_tokens: number; output_tokens: number }> = (await get(`/usage?from=${day}&to=${day}`)).data;
  return rows.reduce((sum, r) => sum + r.input_tokens + r.output_tokens, 0);
};
/** The tool names a recorded request offered, in either wire format. */
const offered = (body: any): Array<{ name: string; description: string }> =>
  (body.tools ?? []).map((t: any) => (t.function ? t.function : t));
const resultOf = (messages: any[], name: string) =>
  messages.flatMap((m) => (m.role === "tool" ? m.content : [])).find((b: any) => b.name === name);

let made = 0;
/** A fresh agent (names are the tenant's, unique across the file). */
async function newAgent(provider: string, fields: Record<string, unknown> = {}) {
  const name = `agent-${++made}`;
  const res = await inject("POST", "/agents", { name, provider, description: `Agent ${made} finds facts`, ...fields });
  expect(res.status).toBe(201);
  return name;
}

describe.each(["anthropic", "openai"] as const)("agents as tools through %s", (provider) => {
  async function parentCalling(agent: string, extra: Record<string, unknown> = {}) {
    return client().createConversation({ provider, agents: [agent], tools: [], ...extra });
  }

  test("a call runs the agent in a child conversation; the parent goes on with its answer, usage summed and counted once", async () => {
    const researcher = await newAgent(provider);
    const conv = await parentCalling(researcher);
    expect(conv.agents).toEqual([researcher]);
    const before = await usedToday();
    f.llm.script(
      {
        toolCalls: [{ name: `agent__${researcher}`, input: { message: "How tall is Tokyo Tower?" } }],
        usage: usage(100, 10),
      },
      { text: "333 metres.", usage: usage(1000, 100) },
      { text: "Tokyo Tower is 333 m tall.", usage: usage(200, 20) },
    );
    const res = await client().send(conv.id, { content: "How tall is Tokyo Tower?" });
    expect(res.statusCode).toBe(200);
    const { run, messages } = res.json();
    expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn" });

    // The model was offered the agent, described as the agent is.
    const tool = offered(f.llm.requests[0]!.body).find((t) => t.name === `agent__${researcher}`);
    expect(tool?.description).toContain("finds facts");

    expect(run.children).toHaveLength(1);
    const [child] = run.children;
    const childConv = await get(`/conversations/${child.conversation_id}`);
    const call = messages[1].content.find((b: any) => b.type === "tool_call");
    expect(childConv.parent).toEqual({ conversation_id: conv.id, run_id: run.id, tool_call_id: call.id });
    expect(childConv.agent).toMatchObject({ name: researcher, version: 1 });
    const childRun = await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`);
    expect(childRun).toMatchObject({ status: "completed", usage: { input_tokens: 1000, output_tokens: 100 } });

    const result = resultOf(messages, `agent__${researcher}`);
    expect(result.is_error).toBe(false);
    expect(JSON.parse(result.content)).toMatchObject({
      conversation_id: child.conversation_id,
      run_id: child.run_id,
      status: "completed",
      answer: "333 metres.",
    });
    // The parent's usage holds its child's; /usage counts each token once.
    expect(run.usage).toMatchObject({ input_tokens: 1300, output_tokens: 130 });
    expect((await usedToday()) - before).toBe(1430);
    // The last call saw the child's answer as the tool result.
    expect(JSON.stringify(f.llm.requests[2]!.body)).toContain("333 metres.");
  });

  test("a call past MAX_AGENT_DEPTH gets an error result and starts nothing; the caller goes on", async () => {
    const researcher = await newAgent(provider);
    const manager = await newAgent(provider, { agents: [researcher] });
    const conv = await parentCalling(manager);
    f.llm.script(
      { toolCalls: [{ name: `agent__${manager}`, input: { message: "Ask around" } }] },
      { toolCalls: [{ name: `agent__${researcher}`, input: { message: "Find it" } }] },
      { text: "Nobody to ask; I did it myself." },
      { text: "Done." },
    );
    const res = await client().send(conv.id, { content: "Go" });
    const { run } = res.json();
    expect(run.status).toBe("completed");
    const [child] = run.children;
    const childRun = await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`);
    expect(childRun).toMatchObject({ status: "completed", children: [] });
    const refused = resultOf(await client().history(child.conversation_id), `agent__${researcher}`);
    expect(refused.is_error).toBe(true);
    expect(refused.content).toContain("MAX_AGENT_DEPTH");
  });

  test("a child that fails: the parent gets an error result naming it and goes on", async () => {
    const researcher = await newAgent(provider);
    const conv = await parentCalling(researcher);
    f.llm.script(
      { toolCalls: [{ name: `agent__${researcher}`, input: { message: "Find it" } }] },
      { status: 400, message: "bad request" },
      { text: "The researcher failed; here is what I know." },
    );
    const { run, messages } = (await client().send(conv.id, { content: "Go" })).json();
    expect(run.status).toBe("completed");
    const result = resultOf(messages, `agent__${researcher}`);
    expect(result.is_error).toBe(true);
    expect(JSON.parse(result.content)).toMatchObject({ status: "failed", run_id: run.children[0].run_id });
  });

  test("a child that ends on its budget: the parent gets an incomplete error result and goes on", async () => {
    const researcher = await newAgent(provider, { tools: ["calculate"], budget: { max_steps: 2 } });
    const conv = await parentCalling(researcher);
    f.llm.script(
      { toolCalls: [{ name: `agent__${researcher}`, input: { message: "Sum it" } }] },
      { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] },
      { text: "Partly done: 2." },
      { text: "It came to 2, partly." },
    );
    const { run, messages } = (await client().send(conv.id, { content: "Go" })).json();
    expect(run.status).toBe("completed");
    const result = resultOf(messages, `agent__${researcher}`);
    expect(result.is_error).toBe(true);
    expect(JSON.parse(result.content)).toMatchObject({
      status: "incomplete",
      stop_reason: "max_steps",
      budget_exceeded: "steps",
      answer: "Partly done: 2.",
    });
  });

  describe("a child's approval pauses the parent", () => {
    async function pausedParent() {
      const researcher = await newAgent(provider, { tools: ["delete_note"], approval_required: ["delete_note"] });
      const conv = await parentCalling(researcher);
      f.llm.script(
        { toolCalls: [{ name: `agent__${researcher}`, input: { message: "Delete the old note" } }] },
        { toolCalls: [{ name: "delete_note", input: { title: "old" } }] },
      );
      const { run } = (await client().send(conv.id, { content: "Tidy up" })).json();
      return { researcher, conv, run };
    }

    test("the parent shows the child's required_action; approved on the parent, both complete", async () => {
      effects.length = 0;
      const { researcher, conv, run } = await pausedParent();
      expect(run.status).toBe("requires_action");
      const [child] = run.children;
      const [pending] = run.required_action.tool_calls;
      expect(pending).toMatchObject({ name: "delete_note", input: { title: "old" }, action: "approve", child });
      expect((await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`)).status).toBe(
        "requires_action",
      );

      f.llm.script({ text: "Deleted." }, { text: "The old note is gone." });
      const answered = await inject("POST", `/conversations/${conv.id}/runs/${run.id}/actions`, {
        approvals: [{ tool_call_id: pending.tool_call_id, approve: true }],
      });
      expect(answered.status).toBe(200);
      expect(answered.body.run).toMatchObject({ status: "completed" });
      expect(effects).toEqual(["deleted old"]);
      expect((await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`)).status).toBe("completed");
      const result = resultOf(await client().history(conv.id), `agent__${researcher}`);
      expect(JSON.parse(result.content)).toMatchObject({ status: "completed", answer: "Deleted." });
      // One child for the one call, even though the call ran twice (before and after the pause).
      expect((await get(`/conversations/${conv.id}/runs/${run.id}`)).children).toEqual([child]);
    });

    test("denied on the parent: the child reads the denial, answers, and the parent goes on", async () => {
      effects.length = 0;
      const { researcher, conv, run } = await pausedParent();
      const [pending] = run.required_action.tool_calls;
      f.llm.script({ text: "I was not allowed to delete it." }, { text: "The note stays." });
      const answered = await inject("POST", `/conversations/${conv.id}/runs/${run.id}/actions`, {
        approvals: [{ tool_call_id: pending.tool_call_id, approve: false, reason: "keep it" }],
      });
      expect(answered.body.run).toMatchObject({ status: "completed" });
      expect(effects).toEqual([]);
      const childHistory = await client().history(run.children[0].conversation_id);
      expect(resultOf(childHistory, "delete_note")).toMatchObject({ is_error: true });
      expect(resultOf(childHistory, "delete_note").content).toContain("keep it");
      const result = resultOf(await client().history(conv.id), `agent__${researcher}`);
      expect(JSON.parse(result.content)).toMatchObject({ answer: "I was not allowed to delete it." });
    });

    test("cancelling the paused parent cancels the paused child", async () => {
      const { conv, run } = await pausedParent();
      const [child] = run.children;
      const cancelled = await inject("POST", `/conversations/${conv.id}/runs/${run.id}/cancel`);
      expect(cancelled.body).toMatchObject({ status: "cancelled" });
      expect((await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`)).status).toBe("cancelled");
      // Both histories stay valid: the next message on each goes through the fake's checks.
      f.llm.script({ text: "ok" }, { text: "ok" });
      expect((await client().send(conv.id, { content: "again" })).json().run.status).toBe("completed");
      expect((await client().send(child.conversation_id, { content: "again" })).json().run.status).toBe("completed");
    });
  });

  test("cancelling a running parent cancels the child it waits for", async () => {
    const researcher = await newAgent(provider);
    const conv = await parentCalling(researcher);
    f.llm.script({ toolCalls: [{ name: `agent__${researcher}`, input: { message: "Think long" } }] }, { hang: true });
    const started = await client().send(conv.id, { content: "Go", wait: false });
    expect(started.statusCode).toBe(202);
    const runId = started.json().run.id;
    const child = await vi.waitFor(
      async () => {
        const [c] = (await get(`/conversations/${conv.id}/runs/${runId}`)).children;
        expect(c).toBeDefined();
        expect(f.llm.requests).toHaveLength(2);
        return c;
      },
      { timeout: 10_000, interval: 20 },
    );
    const cancelled = await inject("POST", `/conversations/${conv.id}/runs/${runId}/cancel`);
    expect(cancelled.body).toMatchObject({ status: "cancelled" });
    const childRun = await vi.waitFor(
      async () => {
        const r = await get(`/conversations/${child.conversation_id}/runs/${child.run_id}`);
        expect(r.status).toBe("cancelled");
        return r;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(childRun.stop_reason).toBe("cancelled");
  });
});

describe("agents in a configuration are checked", () => {
  test("an unknown agent: 400 naming agents[i]", async () => {
    const known = await newAgent("anthropic");
    const res = await inject("POST", "/conversations", { agents: [known, "no-such-agent"] });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ field: "body.agents[1]" });
  });

  test("an archived agent: 400 naming it; on an agent too", async () => {
    const gone = await newAgent("anthropic");
    await inject("DELETE" as "GET", `/agents/${gone}`);
    const res = await inject("POST", "/conversations", { agents: [gone] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body.agents[0]");
    const onAgent = await inject("POST", "/agents", { name: "calls-gone", agents: [gone] });
    expect(onAgent.status).toBe(400);
    expect(onAgent.body.error.details.field).toBe("body.agents[0]");
  });

  test("another tenant's agent is unknown: 400, as for a name nobody has", async () => {
    await f.loopd.services.store.agents.create({
      tenant: "beta",
      name: "betas-own",
      description: null,
      configuration: {},
    });
    const res = await inject("POST", "/conversations", { agents: ["betas-own"] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("does not exist");
  });

  test("agents on an agent are versioned; PATCH of a conversation checks them too", async () => {
    const researcher = await newAgent("anthropic");
    const manager = await newAgent("anthropic");
    const patched = await inject("PATCH", `/agents/${manager}`, { version: 1, agents: [researcher] });
    expect(patched.body).toMatchObject({ version: 2, agents: [researcher] });
    const conv = await client().createConversation({ agent: manager });
    expect(conv.agents).toEqual([researcher]);
    const bad = await inject("PATCH", `/conversations/${conv.id}`, { agents: ["nobody"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("body.agents[0]");
  });
});
