/**
 * A loopd that stops while an MCP call's run goes on: the call answers
 * before the server goes, naming the conversation and the run; the next
 * process recovers the run; the old session is unknown there (404) and a
 * new one reads the run's answer with get_conversation.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, test } from "vitest";
import { waitForRunEnd } from "../../src/runs/wait-for-run-end.js";
import { deleteNoteTool, effects } from "../support/helpers/action-tools.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const held = heldTool();
const f = useLoopd({ listen: true, tools: [...testTools(), held.tool, deleteNoteTool()] });
afterAll(() => held.release());

async function connect({ elicit }: { elicit?: () => Promise<never> } = {}): Promise<Client> {
  const client = new Client({ name: "test", version: "1" }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${f.loopd.url}/mcp`)));
  return client;
}
const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("a restart mid-call: the call names the run and how to read it; the run recovers; a new session reads its answer", async () => {
    held.reset();
    const name = `holder-${provider}`;
    expect(
      (await f.loopd.app.inject({ method: "POST", url: "/agents", payload: { name, provider, tools: ["hold"] } }))
        .statusCode,
    ).toBe(201);
    f.llm.script({ toolCalls: [{ name: "hold" }] }, { text: "Recovered." });
    const before = await connect();
    const sessionId = (before.transport as StreamableHTTPClientTransport).sessionId!;
    const call = before.callTool({
      name: `agent_${name}`,
      arguments: { message: "Hold on." },
    }) as Promise<CallToolResult>;
    await held.entered();
    const [result] = await Promise.all([call, f.restart()]);

    expect(result.isError).toBe(true);
    const { conversation_id, run_id } = result._meta!.loopd as { conversation_id: string; run_id: string };
    expect(textOf(result)).toContain(`run ${run_id} of conversation ${conversation_id} goes on`);
    expect(textOf(result)).toContain("get_conversation");
    await before.close().catch(() => {});

    // The new process has no such session (the old one's sessions went with it).
    const stale = await fetch(`${f.loopd.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(stale.status).toBe(404);

    const ended = await waitForRunEnd({ services: f.loopd.services, runs: f.loopd.runs, runId: run_id });
    expect(ended).toMatchObject({ status: "completed" });
    const after = await connect();
    const read = (await after.callTool({ name: "get_conversation", arguments: { conversation_id } })) as CallToolResult;
    const page = JSON.parse(textOf(read));
    expect(page.conversation.active_run_id).toBeNull();
    expect(page.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Recovered." }] });
    await after.close();
  });

  test("a restart while the call asks for an approval: the run stays paused (a restart is not a cancel), to be answered later", async () => {
    effects.length = 0;
    const name = `gated-${provider}`;
    expect(
      (
        await f.loopd.app.inject({
          method: "POST",
          url: "/agents",
          payload: { name, provider, tools: ["delete_note"], approval_required: ["delete_note"] },
        })
      ).statusCode,
    ).toBe(201);
    f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "a" } }] }, { text: "Deleted." });
    let asked!: () => void;
    const elicited = new Promise<void>((resolve) => (asked = resolve));
    // A client that declares elicitation, and is slow to answer (a person deciding).
    const client = await connect({ elicit: () => (asked(), new Promise<never>(() => {})) });
    let runId: string | undefined;
    const call = client
      .callTool({ name: `agent_${name}`, arguments: { message: "Delete a." } }, undefined, {
        onprogress: (p) => void (runId ??= /run (run_\w+)/.exec(p.message ?? "")?.[1]),
      })
      .catch((err: unknown) => err);
    await elicited;
    const [result] = await Promise.all([call, f.restart()]);
    await client.close().catch(() => {});

    // The call was answered before the server went: the run goes on, paused, and where to read it.
    expect(result).toMatchObject({ isError: true, _meta: { loopd: { run_id: runId } } });
    expect(textOf(result as CallToolResult)).toContain("goes on without this call");
    const run = await f.loopd.services.store.runs.get(runId!);
    expect(run).toMatchObject({ status: "requires_action" });
    expect(effects).toEqual([]);
  });
});
