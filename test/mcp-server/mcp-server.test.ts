/**
 * loopd as an MCP server at `/mcp`, through the official SDK's client over
 * Streamable HTTP against a listening loopd: the caller's agents as tools,
 * a call as a run (new conversation or a named one), its answer, structured
 * output, progress per step, cancellation, approvals by elicitation (and
 * without it), keys, tenants and the host check.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitResult,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { waitForRunEnd } from "../../src/runs/wait-for-run-end.js";
import { deleteNoteTool, effects } from "../support/helpers/action-tools.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const held = heldTool();
const f = useLoopd({
  listen: true,
  tools: [...testTools(), deleteNoteTool(), held.tool],
  // Pauses of 30 days: longer than a timer holds (2^31 ms), so the elicitation's bound is clamped.
  env: { API_KEYS_REQUIRED: "true", ALLOWED_HOSTS: "loopd.example", ACTION_TIMEOUT_S: String(30 * 24 * 3600) },
});

const keys: Record<string, string> = {};
beforeAll(async () => {
  for (const tenant of ["acme", "beta"])
    keys[tenant] = (await f.loopd.services.store.keys.create({ tenant, name: null })).key;
});

const clients: Client[] = [];
afterEach(async () => {
  held.release();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  held.reset();
});

/** An MCP client of `tenant`'s key; with `elicit`, it declares elicitation and answers with it. */
async function connect(
  tenant = "acme",
  { elicit }: { elicit?: (message: string) => ElicitResult } = {},
): Promise<Client> {
  const client = new Client({ name: "test", version: "1" }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params.message));
  const transport = new StreamableHTTPClientTransport(new URL(`${f.loopd.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${keys[tenant]}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const api = async (method: string, url: string, body?: object, tenant = "acme") => {
  const res = await fetch(`${f.loopd.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${keys[tenant]}`, ...(body && { "content-type": "application/json" }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

const makeAgent = async (name: string, fields: object, tenant = "acme") =>
  expect((await api("POST", "/agents", { name, system: "You help.", ...fields }, tenant)).status).toBe(201);

const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const loopdMeta = (result: CallToolResult) => result._meta?.loopd as { conversation_id: string; run_id: string };
const runIdIn = (message: string | undefined) => /run (run_\w+)/.exec(message ?? "")?.[1];

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  const agent = `helper-${provider}`;
  beforeAll(async () => {
    await makeAgent(agent, { description: "Helps with sums", provider, tools: ["calculate"] });
    await makeAgent(`gated-${provider}`, { provider, tools: ["delete_note"], approval_required: ["delete_note"] });
    await makeAgent(`holder-${provider}`, { provider, tools: ["hold"] });
    await makeAgent(`typed-${provider}`, {
      provider,
      finish: {
        result_schema: { type: "object", properties: { total: { type: "number" } }, required: ["total"] },
      },
    });
    await makeAgent(`other-${provider}`, { provider }, "beta");
  });

  test("tools/list: the caller's agents as agent_<name> with their description, beside the two conversation tools", async () => {
    const { tools } = await (await connect()).listTools();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 2)).toEqual(["list_conversations", "get_conversation"]);
    expect(names).toContain(`agent_${agent}`);
    expect(names).not.toContain(`agent_other-${provider}`);
    const tool = tools.find((t) => t.name === `agent_${agent}`)!;
    expect(tool.description).toBe("Helps with sums");
    expect(tool.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    expect(tools.find((t) => t.name === `agent_typed-${provider}`)!.outputSchema).toMatchObject({
      required: ["total"],
    });
  });

  test("a call runs the agent in a new conversation; a second naming it continues it", async () => {
    const client = await connect();
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "12*7" } }] }, { text: "12*7 = 84" });
    const first = (await client.callTool({
      name: `agent_${agent}`,
      arguments: { message: "What is 12*7?" },
    })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect(textOf(first)).toBe("12*7 = 84");
    const { conversation_id, run_id } = loopdMeta(first);
    const run = await api("GET", `/conversations/${conversation_id}/runs/${run_id}`);
    expect(run.body).toMatchObject({ status: "completed", steps: 2, agent: { name: agent } });

    f.llm.script({ text: "Still 84." });
    const second = (await client.callTool({
      name: `agent_${agent}`,
      arguments: { message: "And again?", conversation_id },
    })) as CallToolResult;
    expect(textOf(second)).toBe("Still 84.");
    expect(loopdMeta(second).conversation_id).toBe(conversation_id);
    expect(loopdMeta(second).run_id).not.toBe(run_id);

    const read = (await client.callTool({
      name: "get_conversation",
      arguments: { conversation_id },
    })) as CallToolResult;
    const page = JSON.parse(textOf(read));
    expect(page.conversation).toMatchObject({ id: conversation_id, active_run_id: null, agent: { name: agent } });
    expect(page.messages.filter((m: { role: string }) => m.role === "user")).toHaveLength(2);
    const listed = (await client.callTool({ name: "list_conversations", arguments: { limit: 100 } })) as CallToolResult;
    expect(JSON.parse(textOf(listed)).data.map((c: { id: string }) => c.id)).toContain(conversation_id);
  });

  test("an agent with a finish schema answers with the finish tool's result as structuredContent", async () => {
    f.llm.script({ toolCalls: [{ name: "finish", input: { summary: "Added them.", result: { total: 5 } } }] });
    const result = (await (
      await connect()
    ).callTool({
      name: `agent_typed-${provider}`,
      arguments: { message: "2+3?" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ total: 5 });
    expect(textOf(result)).toBe("Added them.");
  });

  test("a client that asks for progress gets the run's start and one notification per step, out of max_steps", async () => {
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }, { text: "2" });
    const seen: Progress[] = [];
    const result = (await (
      await connect()
    ).callTool({ name: `agent_${agent}`, arguments: { message: "1+1?" } }, undefined, {
      onprogress: (p) => seen.push(p),
    })) as CallToolResult;
    const run = await api("GET", `/runs/${loopdMeta(result).run_id}`);
    const total = run.body.budget.max_steps;
    expect(seen.map((p) => [p.progress, p.total])).toEqual([
      [0, total],
      [1, total],
      [2, total],
    ]);
    expect(runIdIn(seen[0]!.message)).toBe(loopdMeta(result).run_id);
  });

  test("cancelling the MCP request cancels the run", async () => {
    f.llm.script({ toolCalls: [{ name: "hold" }] }, { text: "never" });
    const abort = new AbortController();
    let runId: string | undefined;
    const call = (await connect())
      .callTool({ name: `agent_holder-${provider}`, arguments: { message: "Hold." } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => void (runId ??= runIdIn(p.message)),
      })
      .catch((err: unknown) => err);
    await held.entered();
    abort.abort();
    expect(await call).toBeInstanceOf(Error);
    const ended = await waitForRunEnd({ services: f.loopd.services, runs: f.loopd.runs, runId: runId! });
    expect(ended).toMatchObject({ status: "cancelled" });
  });

  test("an approval asked through elicitation: accept runs the call", async () => {
    effects.length = 0;
    const asked: string[] = [];
    const client = await connect("acme", { elicit: (message) => (asked.push(message), { action: "accept" }) });
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "old" } }] }, { text: "Deleted." });
    const result = (await client.callTool({
      name: `agent_gated-${provider}`,
      arguments: { message: "Delete old." },
    })) as CallToolResult;
    expect(textOf(result)).toBe("Deleted.");
    expect(effects).toEqual(["deleted old"]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("delete_note");
  });

  test("an approval asked through elicitation: decline denies the call, and the model reads why", async () => {
    effects.length = 0;
    const client = await connect("acme", { elicit: () => ({ action: "decline" }) });
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "keep" } }] }, { text: "Not deleted." });
    const result = (await client.callTool({
      name: `agent_gated-${provider}`,
      arguments: { message: "Delete keep." },
    })) as CallToolResult;
    expect(textOf(result)).toBe("Not deleted.");
    expect(effects).toEqual([]);
    const lastCall = f.llm.requests.at(-1)!;
    expect(JSON.stringify(lastCall.body)).toContain("the user declined this call");
  });

  test("an approval asked for a call whose input is too long to show: the question says it is cut, how long it is, and where to read it whole", async () => {
    effects.length = 0;
    const asked: string[] = [];
    const client = await connect("acme", { elicit: (message) => (asked.push(message), { action: "decline" }) });
    // What a prompt-injected model might send: harmless text first, the part that matters past what a dialog shows.
    const title = `${"a harmless note ".repeat(200)}AND EVERY OTHER NOTE`;
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title } }] }, { text: "Not deleted." });
    const result = (await client.callTool({
      name: `agent_gated-${provider}`,
      arguments: { message: "Delete it." },
    })) as CallToolResult;
    expect(effects).toEqual([]);
    expect(asked).toHaveLength(1);
    const { conversation_id, run_id } = loopdMeta(result);
    expect(asked[0]).not.toContain("AND EVERY OTHER NOTE");
    expect(asked[0]).toContain(`cut: ${JSON.stringify({ title }).length} characters`);
    expect(asked[0]).toContain(`GET /conversations/${conversation_id}/runs/${run_id}`);
  });

  test("a client without elicitation: an error result naming the paused run and the route that answers it", async () => {
    effects.length = 0;
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "x" } }] }, { text: "Done." });
    const result = (await (
      await connect()
    ).callTool({
      name: `agent_gated-${provider}`,
      arguments: { message: "Delete x." },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const { conversation_id, run_id } = loopdMeta(result);
    expect(textOf(result)).toContain(`POST /conversations/${conversation_id}/runs/${run_id}/actions`);
    const run = await api("GET", `/conversations/${conversation_id}/runs/${run_id}`);
    expect(run.body.status).toBe("requires_action");
    // Answered on the route, the run goes on.
    const answered = await api("POST", `/conversations/${conversation_id}/runs/${run_id}/actions`, {
      approvals: [{ tool_call_id: run.body.required_action.tool_calls[0].tool_call_id, approve: true }],
    });
    expect(answered.body.run.status).toBe("completed");
    expect(effects).toEqual(["deleted x"]);
  });

  test("another tenant's agent is an unknown tool, and its conversation an unknown one", async () => {
    const beta = await connect("beta");
    await expect(beta.callTool({ name: `agent_${agent}`, arguments: { message: "Hi" } })).rejects.toThrow(
      /Unknown tool/,
    );
    f.llm.script({ text: "Mine." });
    const mine = (await (
      await connect()
    ).callTool({
      name: `agent_${agent}`,
      arguments: { message: "Hi" },
    })) as CallToolResult;
    const { conversation_id } = loopdMeta(mine);
    const read = (await beta.callTool({ name: "get_conversation", arguments: { conversation_id } })) as CallToolResult;
    expect(read.isError).toBe(true);
    expect(textOf(read)).toBe(`not_found: conversation ${conversation_id} does not exist`);
    const theirs = (await beta.callTool({
      name: `agent_other-${provider}`,
      arguments: { message: "Hi", conversation_id },
    })) as CallToolResult;
    expect(textOf(theirs)).toBe(`not_found: conversation ${conversation_id} does not exist`);
  });
});

describe("the route", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };
  const post = (headers: Record<string, string>, body: object = initialize) =>
    fetch(`${f.loopd.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body),
    });

  test("without a key: 401 in the contract's shape", async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string; details: Record<string, unknown> } }).error.code).toBe(
      "unauthorized",
    );
  });

  test("a session answers only its own tenant: another tenant's key gets 404, as an unknown session does", async () => {
    const client = await connect("acme");
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    expect(sessionId).toBeTruthy();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const theirs = await post({ authorization: `Bearer ${keys.beta}`, "mcp-session-id": sessionId }, list);
    expect(theirs.status).toBe(404);
    expect(((await theirs.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const unknown = await post({ authorization: `Bearer ${keys.acme}`, "mcp-session-id": "no-such-session" }, list);
    expect(unknown.status).toBe(404);
    // Its own tenant still has it.
    expect((await client.listTools()).tools.length).toBeGreaterThan(1);
  });

  test("a request other than initialize without a session: 400 naming the header", async () => {
    const res = await post({ authorization: `Bearer ${keys.acme}` }, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(res.status).toBe(400);
    expect(
      ((await res.json()) as { error: { code: string; details: Record<string, unknown> } }).error.details.field,
    ).toBe("headers.mcp-session-id");
  });

  test("the host check applies: a name loopd does not answer to gets 421", async () => {
    const res = await f.loopd.app.inject({
      method: "POST",
      url: "/mcp",
      headers: {
        host: "evil.example",
        authorization: `Bearer ${keys.acme}`,
        accept: "application/json, text/event-stream",
      },
      payload: initialize,
    });
    expect(res.statusCode).toBe(421);
    expect(res.json().error.code).toBe("misdirected_request");
  });
});
