/**
 * The MCP sessions' bounds through the route: an `initialize` that the
 * transport would refuse opens no session, so it takes no other session's
 * place; a session with a call in flight is in use, whether or not its
 * client still holds the call's stream, so it is not closed for another.
 */
import { afterAll, describe, expect, test } from "vitest";
import { waitForRunEnd } from "../../src/runs/wait-for-run-end.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const held = heldTool();
const f = useLoopd({ listen: true, tools: [held.tool], env: { MCP_MAX_SESSIONS_PER_TENANT: "1" } });
afterAll(() => held.release());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const post = (body: object, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${f.loopd.url}/mcp`, {
    method: "POST",
    ...(signal && { signal }),
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });

/** A session opened by hand (no client holds a stream of it open): its headers. */
async function openSession() {
  const opened = await post(initialize);
  expect(opened.status).toBe(200);
  const sessionId = opened.headers.get("mcp-session-id")!;
  await opened.text();
  const session = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
  expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).status).toBe(202);
  return session;
}

test("an initialize the transport would refuse (an Accept without text/event-stream): 400 naming the header, and the tenant's idle session stays", async () => {
  const session = await openSession();
  const refused = await post(initialize, { accept: "application/json" });
  expect(refused.status).toBe(400);
  const body = (await refused.json()) as { error: { code: string; details: { field: string } } };
  expect(body.error).toMatchObject({ code: "invalid_request", details: { field: "headers.accept" } });
  expect(refused.headers.get("mcp-session-id")).toBeNull();

  // At a cap of one session, the refused initialize took nothing: the idle session still answers.
  const listed = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
  expect(listed.status).toBe(200);
  expect(await listed.text()).toContain("list_conversations");
});

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("a call in flight whose client dropped its stream keeps its session in use: a new one is refused (429), and the run is not cancelled", async () => {
    held.reset();
    const agent = `holder-${provider}`;
    const made = await fetch(`${f.loopd.url}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: agent, system: "You help.", provider, tools: ["hold"] }),
    });
    expect(made.status).toBe(201);
    f.llm.script({ toolCalls: [{ name: "hold" }] }, { text: "Held and done." });
    const session = await openSession();
    const dropped = new AbortController();
    const call = await post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: `agent_${agent}`, arguments: { message: "Hold." }, _meta: { progressToken: 1 } },
      },
      session,
      dropped.signal,
    );
    // The first progress notification names the run; then the client goes.
    const reader = call.body!.getReader();
    let seen = "";
    while (!/run (run_\w+)/.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    const runId = /run (run_\w+)/.exec(seen)![1]!;
    await held.entered();
    dropped.abort();
    await reader.closed.catch(() => {});

    const another = await post(initialize);
    expect(another.status).toBe(429);
    expect(((await another.json()) as { error: { code: string } }).error.code).toBe("too_many_sessions");
    held.release();
    const ended = await waitForRunEnd({ services: f.loopd.services, runs: f.loopd.runs, runId });
    expect(ended).toMatchObject({ status: "completed" });
    // Its session answers still (and is free again once the call answered).
    expect((await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, session)).status).toBe(200);
    expect((await fetch(`${f.loopd.url}/mcp`, { method: "DELETE", headers: session })).status).toBe(200);
  });
});
