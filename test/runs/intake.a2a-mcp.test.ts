/**
 * The intake over A2A and MCP: a message sent to an agent over A2A, or a
 * call of an agent's tool over /mcp, starts a run as `POST …/messages` does,
 * so it is taken before the next steps of the runs already going, and let go
 * once its run started (not when the run ends: the run's own model call
 * would wait out INTAKE_PRIORITY_MS). Reads and other methods are not taken.
 */
import { TaskState, type Task } from "@a2a-js/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { a2aClient, collect, userMessage } from "../a2a/a2a-client.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Long enough that a request counted and let go only when its run ends would hold the run's own model call 10 s.
const f = useLoopd({ listen: true, env: { INTAKE_PRIORITY_MS: "10000" } });
const intake = () => f.loopd.services.intake;

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

const clients: Client[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** Counts the requests the intake takes while `fn` runs, and how long model calls were held meanwhile. */
async function taking<T>(fn: () => Promise<T>): Promise<{ result: T; begun: number; heldMs: number }> {
  const begin = vi.spyOn(intake(), "begin");
  const heldBefore = intake().held.ms;
  const result = await fn();
  await vi.waitFor(() => expect(intake()).toMatchObject({ taking: 0, waiting: 0 }), { timeout: 5000, interval: 10 });
  const begun = begin.mock.calls.length;
  begin.mockRestore();
  return { result, begun, heldMs: intake().held.ms - heldBefore };
}

describe.each(["anthropic", "openai"] as const)(`through %s (${testDatabaseKind})`, (provider) => {
  const makeAgent = async (agent: string) =>
    expect((await post("/agents", { name: agent, system: "You help.", provider })).status).toBe(201);

  test("A2A: SendMessage, SendStreamingMessage and 0.3's message/send are taken first and let go once their run started; GetTask is not taken", async () => {
    const agent = `a2a-${provider}`;
    await makeAgent(agent);
    const client = await a2aClient(f.loopd.url, agent, null);

    f.llm.script({ text: "one" });
    const sent = await taking(() => client.sendMessage(userMessage("hello")));
    expect((sent.result as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(sent.begun).toBe(1);
    // Let go when the run started: its model call was not held until the slow request's bound.
    expect(sent.heldMs).toBeLessThan(5000);

    f.llm.script({ text: "two" });
    const streamed = await taking(() => collect(client.sendMessageStream(userMessage("again"))));
    expect(streamed.result.length).toBeGreaterThan(1);
    expect(streamed.begun).toBe(1);
    expect(streamed.heldMs).toBeLessThan(5000);

    f.llm.script({ text: "three" });
    const legacy = await taking(() =>
      post(`/a2a/${agent}`, {
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "hi" }] } },
      }),
    );
    expect(legacy.result.body.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    expect(legacy.begun).toBe(1);
    expect(legacy.heldMs).toBeLessThan(5000);

    // A refused message is let go too (an unknown context).
    const refused = await taking(() =>
      client.sendMessage(userMessage("lost", { contextId: "conv_unknown" })).catch((err: unknown) => err),
    );
    expect(String(refused.result)).toMatch(/not one of agent/);
    expect(refused.begun).toBe(1);

    const read = await taking(() => client.getTask({ tenant: "", id: (sent.result as Task).id }));
    expect(read.begun).toBe(0);
    expect(f.llm.requests).toHaveLength(3);
  });

  test("MCP: a call of an agent's tool is taken first and let go once its run started; tools/list and list_conversations are not taken", async () => {
    const agent = `mcp-${provider}`;
    await makeAgent(agent);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${f.loopd.url}/mcp`)));
    clients.push(client);

    f.llm.script({ text: "from the agent" });
    const called = await taking(() => client.callTool({ name: `agent_${agent}`, arguments: { message: "hi" } }));
    expect(called.result.isError).toBeFalsy();
    expect(called.result.content).toEqual([{ type: "text", text: "from the agent" }]);
    expect(called.begun).toBe(1);
    expect(called.heldMs).toBeLessThan(5000);

    // Refused before any run (a conversation that is not the agent's): let go as its answer goes out.
    const refused = await taking(() =>
      client.callTool({ name: `agent_${agent}`, arguments: { message: "hi", conversation_id: "conv_unknown" } }),
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.begun).toBe(1);

    const listed = await taking(async () => {
      await client.listTools();
      return client.callTool({ name: "list_conversations", arguments: {} });
    });
    expect(listed.begun).toBe(0);
    expect(f.llm.requests).toHaveLength(1);
  });
});
