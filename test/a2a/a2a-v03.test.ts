/**
 * A 0.3 client: the SDK's v0.3 transport, and 0.3's wire format by hand
 * (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`), on the
 * same endpoint and the same runs as 1.0's.
 */
import { TaskState } from "@a2a-js/sdk";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { fetchWithKey, textsOf, userMessage } from "./a2a-client.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true" } });

let key = "";
const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetchWithKey(key)(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
  const agent = `legacy-${provider}`;

  test("0.3's message/send and tasks/get by hand: a task of kind task, its state in 0.3's words, the answer as an artifact", async () => {
    key ||= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
    expect((await post("/agents", { name: agent, provider })).status).toBe(201);
    f.llm.script({ text: "Hello, old client." });
    const sent = await post(`/a2a/${agent}`, {
      jsonrpc: "2.0",
      id: "a",
      method: "message/send",
      params: { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "Hi" }] } },
    });
    expect(sent.status).toBe(200);
    const { result } = (await sent.json()) as any;
    expect(result).toMatchObject({ kind: "task", status: { state: "completed" } });
    expect(result.artifacts[0].parts).toEqual([{ kind: "text", text: "Hello, old client." }]);
    expect(result.id).toMatch(/^run_/);
    expect(result.contextId).toMatch(/^conv_/);

    const got = (await (
      await post(`/a2a/${agent}`, { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { id: result.id } })
    ).json()) as any;
    expect(got.result).toMatchObject({ id: result.id, kind: "task", status: { state: "completed" } });
    const unknown = (await (
      await post(`/a2a/${agent}`, { jsonrpc: "2.0", id: 3, method: "tasks/get", params: { id: "run_nope" } })
    ).json()) as any;
    expect(unknown.error.code).toBe(-32001);
  });

  test("the SDK's 0.3 transport: send, then the next message in the context, then stream", async () => {
    const transport = new LegacyJsonRpcTransport({
      endpoint: `${f.loopd.url}/a2a/${agent}`,
      fetchImpl: fetchWithKey(key),
    });
    f.llm.script({ text: "One." }, { text: "Two." }, { text: "Three." });
    const first = (await transport.sendMessage(userMessage("1"))) as any;
    expect(first.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = (await transport.sendMessage(userMessage("2", { contextId: first.contextId }))) as any;
    expect(second.contextId).toBe(first.contextId);
    expect(textsOf(second.artifacts[0].parts)).toEqual(["Two."]);
    const events = [];
    for await (const e of transport.sendMessageStream(userMessage("3", { contextId: first.contextId })))
      events.push(e.payload!);
    const last = events.at(-1)!;
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(events.some((e) => e.$case === "artifactUpdate")).toBe(true);
  });

  test("an A2A-Version the card does not offer is refused", async () => {
    const res = (await (
      await post(
        `/a2a/${agent}`,
        { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "run_x" } },
        { "a2a-version": "9.9" },
      )
    ).json()) as any;
    expect(res.error.code).toBe(-32009);
  });
});
