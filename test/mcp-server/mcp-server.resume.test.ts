/**
 * Resumability (Streamable HTTP's Last-Event-ID): a client whose stream
 * breaks in the middle of a call reconnects, gets what it missed, and the
 * call's answer; the run went on meanwhile. The connection is cut by a TCP
 * proxy between the SDK's client and a listening loopd.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { heldTool } from "../support/helpers/held-tool.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const held = heldTool();
const f = useLoopd({ listen: true, tools: [...testTools(), held.tool] });

/** A proxy to loopd that counts its connections and can cut every open one. */
let proxy: Server;
let proxyUrl = "";
const open = new Set<Socket>();
let connections = 0;
beforeAll(async () => {
  const target = new URL(f.loopd.url);
  proxy = createServer((client) => {
    connections++;
    const upstream = tcpConnect(Number(target.port), target.hostname);
    open.add(client);
    client.once("close", () => open.delete(client));
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  held.release();
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
});

test("a stream cut mid-call: the client reconnects with Last-Event-ID and gets the call's answer", async () => {
  expect(
    (
      await f.loopd.app.inject({
        method: "POST",
        url: "/agents",
        payload: { name: "holder", provider: "anthropic", tools: ["hold"] },
      })
    ).statusCode,
  ).toBe(201);
  f.llm.script({ toolCalls: [{ name: "hold" }] }, { text: "Held and done." });
  const client = new Client({ name: "test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${proxyUrl}/mcp`), {
      reconnectionOptions: {
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 5,
      },
    }),
  );
  const progress: number[] = [];
  const call = client.callTool({ name: "agent_holder", arguments: { message: "Hold." } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  }) as Promise<CallToolResult>;
  await held.entered();
  const before = connections;
  for (const socket of open) socket.destroy();
  held.release();
  const result = await call;
  expect(result.content).toEqual([{ type: "text", text: "Held and done." }]);
  expect(connections).toBeGreaterThan(before);
  expect(progress).toEqual([0, 1, 2]);
  await client.close();
});
