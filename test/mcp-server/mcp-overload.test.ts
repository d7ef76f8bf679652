/**
 * Load shedding over MCP: while the process is overloaded, a call of an
 * agent's tool (a new run) is refused as the HTTP routes refuse one (503,
 * Retry-After, the contract's shape, nothing saved); tools/list is served.
 */
import type { InjectOptions } from "fastify";
import { describe, expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { lagEventLoop, until } from "../support/helpers/lag-event-loop.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const MAX_LAG_MS = 300;
const f = useLoopd({
  listen: true,
  env: { MAX_EVENT_LOOP_DELAY_MS: String(MAX_LAG_MS) },
  pressureSampleMs: 100,
});
const inject = (options: InjectOptions) => f.loopd.app.inject(options);
const state = () => f.loopd.services.overload.state;
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("overloaded: tools/call of an agent gets 503 with Retry-After and starts nothing; tools/list is served", async () => {
    await until(() => state() === "normal", { timeoutMs: 30_000, what: "the guard's arming" });
    const agent = `helper-${provider}`;
    expect(
      (await inject({ method: "POST", url: "/agents", payload: { name: agent, system: "You help.", provider } }))
        .statusCode,
    ).toBe(201);
    const opened = await fetch(`${f.loopd.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    const session = {
      ...headers,
      "mcp-session-id": opened.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-06-18",
    };
    await opened.text();
    const post = (body: object) => inject({ method: "POST", url: "/mcp", headers: session, payload: body });
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).statusCode).toBe(202);
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: `agent_${agent}`, arguments: { message: "Hi" } },
    });

    const lag = lagEventLoop({ busyMs: 2 * MAX_LAG_MS });
    try {
      await until(() => state() === "overloaded", { what: "overload" });
      const before = await rowCounts(f.database);
      for (const res of await Promise.all([post(call(2)), post([call(3), call(4)])])) {
        expect(expectError(res, 503, "unavailable").details).toEqual({ reason: "overloaded" });
        expect(res.headers["retry-after"]).toBe("5");
      }
      expect(await rowCounts(f.database)).toEqual(before);
      const listed = await post({ jsonrpc: "2.0", id: 5, method: "tools/list" });
      expect(listed.statusCode).toBe(200);
      expect(listed.body).toContain(`agent_${agent}`);
    } finally {
      await lag.stop();
    }
  }, 90_000);
});
