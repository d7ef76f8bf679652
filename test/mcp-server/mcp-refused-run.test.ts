/**
 * An agent's tool called over MCP makes a conversation for the run; when the
 * run is refused after that (here the tenant's cap on active runs), the call
 * fails with the reason and the conversation made for it is gone: nothing
 * is left behind empty (as the HTTP routes leave nothing).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { heldTool } from "../support/helpers/held-tool.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const held = heldTool();
const f = useLoopd({ listen: true, tools: [...testTools(), held.tool], env: { MAX_ACTIVE_RUNS_PER_TENANT: "1" } });

const clients: Client[] = [];
afterEach(async () => {
  held.release();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  held.reset();
});

const api = async (method: string, url: string, body?: object) => {
  const res = await fetch(`${f.loopd.url}${url}`, {
    method,
    ...(body && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("a run refused after its conversation was made: the call fails with the reason, and the conversation is gone", async () => {
    const agent = `capped-${provider}`;
    expect((await api("POST", "/agents", { name: agent, system: "You help.", provider, tools: ["hold"] })).status).toBe(
      201,
    );
    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${f.loopd.url}/mcp`)));
    clients.push(client);

    // The tenant's one active run: held inside its tool.
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "released" });
    const first = client.callTool({ name: `agent_${agent}`, arguments: { message: "hold on" } });
    await held.entered();
    const before = (await api("GET", "/conversations?limit=100")).body.data.map((c: any) => c.id);

    const refused = (await client
      .callTool({ name: `agent_${agent}`, arguments: { message: "another" } })
      .catch((err: Error) => ({ isError: true, content: [{ type: "text", text: err.message }] }))) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/too_many_runs|active runs/);
    expect((await api("GET", "/conversations?limit=100")).body.data.map((c: any) => c.id)).toEqual(before);

    held.release();
    expect(((await first) as CallToolResult).isError).toBeFalsy();
  });
});
