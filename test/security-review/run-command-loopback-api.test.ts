/**
 * With keys off (a loopback HOST), the sandbox keeps a command from loopd's
 * DATA_DIR, but not from loopd itself: it shares loopd's network, sends no
 * Origin and names 127.0.0.1, so loopd's API answers it as the operator,
 * every conversation included. One approved command reads all of what the
 * sandbox hides, and can approve the calls of other runs.
 */
import { describe, expect, test, vi } from "vitest";
import { api } from "../helpers/api.js";
import { useLoopd } from "../helpers/use-loopd.js";

const f = useLoopd({
  listen: true,
  env: { ENABLE_RUN_COMMAND: "true", TOOL_SANDBOX: "bwrap", TOOL_TIMEOUT_MS: "20000", PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" },
});
const client = () => api(f.loopd.app);

describe("a sandboxed command and loopd's own API on loopback", () => {
  test("an approved command cannot read another conversation through loopd's API", async () => {
    const secret = await client().createConversation({ provider: "openai" });
    f.llm.script({ text: "Noted." });
    expect((await client().send(secret.id, { content: "The launch code is 4242-ZEBRA." })).statusCode).toBe(200);

    const conv = await client().createConversation({ provider: "openai", tools: ["run_command"] });
    f.llm.script({ toolCalls: [{ name: "run_command", input: { command: `curl -s ${f.loopd.url}/conversations/${secret.id}/messages` } }] }, { text: "Done." });
    const paused = (await client().send(conv.id, { content: "Check the service is up." })).json().run;
    expect(paused.status).toBe("requires_action");
    const answered = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${paused.id}/actions`,
      payload: { approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }] },
    });
    expect(answered.statusCode, answered.body).toBe(200);
    await vi.waitFor(
      async () => expect((await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${paused.id}` })).json().status).not.toBe("running"),
      { timeout: 30_000, interval: 50 },
    );
    const result = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0])[0];
    expect(result.is_error).toBe(false);
    // Today the command's stdout holds the other conversation's messages.
    expect(result.content).not.toContain("4242-ZEBRA");
  });
});
