import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { openProcessFixture, type ProcessFixture } from "./process-fixture.js";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";
import { openSse } from "./sse-reader.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * loopd as a real process, killed with SIGKILL while an MCP client's call
 * runs an agent: the client was told the conversation and the run when the
 * run started (the first progress notification), the next process recovers
 * the run, and a new session reads its answer.
 */

let llm: FakeLlm;
let fixture: ProcessFixture | undefined;
let env: Record<string, string>;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);
const start = async () => (loopd = await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" }));

beforeAll(async () => {
  fixture = await openProcessFixture("mcp");
  ({ llm, env } = fixture);
  await start();
});

afterAll(async () => {
  await killAllLoopd();
  await fixture?.close();
});

async function connect(): Promise<Client> {
  const mcp = new Client({ name: "test", version: "1" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${loopd.url}/mcp`)));
  return mcp;
}
const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe(`loopd's MCP server as a process on ${testDatabaseKind}`, () => {
  describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
    test("killed (SIGKILL) mid-call: the client knew the run from its start; the next process recovers it; a new session reads the answer", async () => {
      if (loopd.ended()) await start();
      llm.reset();
      const name = `blocker-${provider}`;
      await client.createConversation({ provider }); // the database is migrated and answering
      const made = await fetch(`${loopd.url}/agents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, provider, tools: ["block_until_stopped"] }),
      });
      expect(made.status).toBe(201);
      llm.script({ toolCalls: [{ name: "block_until_stopped" }] }, { text: "Back after the crash." });

      const before = await connect();
      let first: Progress | undefined;
      const started = new Promise<void>((resolve) => {
        void before
          .callTool({ name: `agent_${name}`, arguments: { message: "Wait." } }, undefined, {
            onprogress: (p) => {
              first ??= p;
              resolve();
            },
          })
          .catch(() => {});
      });
      await started;
      const [, runId, conversationId] = /run (run_\w+) of conversation (conv_\w+)/.exec(first!.message ?? "")!;
      expect(runId).toBeTruthy();
      // Inside the tool: then the kill.
      const events = await openSse(`${loopd.url}/conversations/${conversationId}/runs/${runId}/events`);
      await events.until((e) => e.event === "tool_call.started", 20_000);
      events.close();
      expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
      await before.close().catch(() => {});

      await start();
      const run = await client.waitForRunEnd(conversationId!, runId!, 30_000);
      expect(run).toMatchObject({ status: "completed" });
      const after = await connect();
      const read = (await after.callTool({
        name: "get_conversation",
        arguments: { conversation_id: conversationId },
      })) as CallToolResult;
      const page = JSON.parse(textOf(read));
      expect(page.conversation.active_run_id).toBeNull();
      expect(page.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "Back after the crash." }],
      });
      await after.close();
    });
  });
});
