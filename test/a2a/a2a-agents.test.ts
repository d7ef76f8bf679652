/**
 * loopd's agents through the A2A SDK's own client (protocol 1.0 over
 * JSON-RPC) against a listening loopd with keys on: cards, tasks that are
 * runs, contexts that are conversations, streams read from the run's
 * events, approvals as input-required, tenants kept apart.
 */
import { TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testTools } from "../support/helpers/test-tools.js";
import { toolResultsIn, userTextsIn } from "../support/helpers/wire.js";
import { a2aClient, collect, dataOf, fetchWithKey, textsOf, userMessage } from "./a2a-client.js";

const f = useLoopd({ listen: true, tools: testTools(), env: { API_KEYS_REQUIRED: "true" } });

const keys: Record<string, string> = {};
const keyOf = async (tenant: string) =>
  (keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key);
const call = async (
  method: string,
  path: string,
  { body, tenant = "acme" }: { body?: unknown; tenant?: string } = {},
) => {
  const res = await fetchWithKey(await keyOf(tenant))(`${f.loopd.url}${path}`, {
    method,
    ...(body !== undefined && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const makeAgent = async (name: string, fields: object = {}, tenant = "acme") => {
  const res = await call("POST", "/agents", {
    body: { name, system: "You help.", provider: "anthropic", ...fields },
    tenant,
  });
  expect(res.body).toMatchObject({ name });
};
const clientOf = async (name: string, tenant = "acme") => a2aClient(f.loopd.url, name, await keyOf(tenant));
const asTask = (result: unknown) => {
  expect(result).toHaveProperty("status");
  return result as Task;
};
const payloads = (events: StreamResponse[]) => events.map((e) => e.payload!);

describe("cards", () => {
  test("each agent has a card whose endpoint is /a2a/:name, at 1.0 and 0.3; the tenant's cards are listed, no other tenant's", async () => {
    await makeAgent("cards-one", { description: "Answers about orders." });
    await makeAgent("cards-other", {}, "beta");
    const card = await call("GET", "/a2a/cards-one/.well-known/agent-card.json");
    expect(card.status).toBe(200);
    const endpoint = `${f.loopd.url}/a2a/cards-one`;
    expect(card.body).toMatchObject({
      name: "cards-one",
      description: "Answers about orders.",
      version: "1",
      capabilities: { streaming: true, pushNotifications: false },
      supportedInterfaces: [
        { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      ],
      url: endpoint,
      protocolVersion: "0.3.0",
      skills: [{ id: "cards-one", name: "cards-one", description: "Answers about orders." }],
    });
    const list = await call("GET", "/.well-known/agent-card.json");
    expect(list.status).toBe(200);
    const names = list.body.agents.map((c: any) => c.name);
    expect(names).toContain("cards-one");
    expect(names).not.toContain("cards-other");
    // The SDK's resolver reads the same card.
    const client = await clientOf("cards-one");
    expect((await client.getAgentCard()).name).toBe("cards-one");
  });

  test("another tenant's agent, an unknown one and an archived one are unknown: 404", async () => {
    await makeAgent("cards-beta", {}, "beta");
    await makeAgent("cards-gone");
    await call("DELETE", "/agents/cards-gone");
    for (const name of ["cards-beta", "no-such-agent", "cards-gone"]) {
      const card = await call("GET", `/a2a/${name}/.well-known/agent-card.json`);
      expect(card.status).toBe(404);
      expect(card.body.error.code).toBe("not_found");
      const rpc = await call("POST", `/a2a/${name}`, {
        body: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "run_x" } },
      });
      expect(rpc.status).toBe(404);
    }
    await expect(clientOf("cards-beta")).rejects.toThrow(/404/);
  });

  test("without a key: 401, the card and the endpoint alike", async () => {
    for (const [method, path] of [
      ["GET", "/.well-known/agent-card.json"],
      ["GET", "/a2a/cards-one/.well-known/agent-card.json"],
      ["POST", "/a2a/cards-one"],
    ] as const) {
      const res = await fetch(`${f.loopd.url}${path}`, {
        method,
        ...(method === "POST" && {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }),
        }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe("unauthorized");
    }
  });
});

describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
  const agent = `helper-${provider}`;
  const approving = `approver-${provider}`;

  test("a send answers a completed task: the run (same id) in a new conversation from the agent, the answer as artifact and status message", async () => {
    await makeAgent(agent, { provider, tools: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "It is 42." });
    const client = await clientOf(agent);
    const task = asTask(await client.sendMessage(userMessage("What is 6*7?")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textsOf(task.artifacts[0]?.parts)).toEqual(["It is 42."]);
    expect(textsOf(task.status?.message?.parts)).toEqual(["It is 42."]);
    expect(task.history.map((m) => textsOf(m.parts)[0])).toEqual(["What is 6*7?", "It is 42."]);
    const run = await call("GET", `/runs/${task.id}`);
    expect(run.body).toMatchObject({ id: task.id, conversation_id: task.contextId, status: "completed", steps: 2 });
    const conversation = await call("GET", `/conversations/${task.contextId}`);
    expect(conversation.body).toMatchObject({ agent: { name: agent }, provider });
    expect(f.llm.requests.every((r) => r.api === provider)).toBe(true);

    // tasks/get reads the same run; historyLength 0 leaves the history out.
    const got = await client.getTask({ tenant: "", id: task.id, historyLength: 0 });
    expect(got).toMatchObject({ id: task.id, contextId: task.contextId, history: [] });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textsOf(got.artifacts[0]?.parts)).toEqual(["It is 42."]);
  });

  test("a stream: the task, a working status per step, the answer as an artifact, then the last status", async () => {
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "Four." });
    const client = await clientOf(agent);
    const events = payloads(await collect(client.sendMessageStream(userMessage("2+2?"))));
    expect(events[0]!.$case).toBe("task");
    const task = events[0]!.value as Task;
    const statuses = events.flatMap((e) => (e.$case === "statusUpdate" ? [e.value] : []));
    expect(statuses.slice(0, -1).every((s) => s.status?.state === TaskState.TASK_STATE_WORKING)).toBe(true);
    // The first step asks for calculate; the tool's end; the second step's answer.
    expect(statuses.map((s) => (s.metadata as any).loopd.event).slice(0, -1)).toEqual(
      expect.arrayContaining(["message.created", "tool_call.completed"]),
    );
    expect(dataOf(statuses.find((s) => dataOf(s.status?.message?.parts).length > 0)?.status?.message?.parts)).toEqual([
      { tool_calls: [expect.objectContaining({ name: "calculate", input: { expression: "2+2" } })] },
    ]);
    const artifact = events.find((e) => e.$case === "artifactUpdate")!;
    expect(artifact.$case === "artifactUpdate" && textsOf(artifact.value.artifact?.parts)).toEqual(["Four."]);
    const last = events.at(-1)!;
    expect(last.$case).toBe("statusUpdate");
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(events.every((e) => e.$case === "task" || (e.value as { taskId: string }).taskId === task.id)).toBe(true);
  });

  test("a second message in the same context is the next task of the same conversation, and the model sees the history", async () => {
    f.llm.script({ text: "Noted: blue." }, { text: "You said blue." });
    const client = await clientOf(agent);
    const first = asTask(await client.sendMessage(userMessage("My colour is blue.")));
    const second = asTask(await client.sendMessage(userMessage("What is my colour?", { contextId: first.contextId })));
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(userTextsIn(f.llm.requests.at(-1)!)).toEqual(["My colour is blue.", "What is my colour?"]);
    // A finished task takes no more messages.
    await expect(
      client.sendMessage(userMessage("more", { contextId: first.contextId, taskId: first.id })),
    ).rejects.toThrow(/completed and takes no message/);
  });

  test("an approval pauses the task as input-required; the next message in its context answers it: approve runs the tool", async () => {
    await makeAgent(approving, { provider, tools: ["calculate"], approval_required: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "Approved: 42." });
    const client = await clientOf(approving);
    const paused = asTask(await client.sendMessage(userMessage("6*7, please")));
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(dataOf(paused.status?.message?.parts)).toEqual([
      expect.objectContaining({ tool_calls: [expect.objectContaining({ name: "calculate", action: "approve" })] }),
    ]);
    // Neither approve nor deny: refused, the task still waits.
    await expect(client.sendMessage(userMessage("hmm", { contextId: paused.contextId }))).rejects.toThrow(
      /waits for an approval/,
    );
    const done = asTask(
      await client.sendMessage(userMessage([{ data: { approve: true } }], { contextId: paused.contextId })),
    );
    expect(done.id).toBe(paused.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textsOf(done.artifacts[0]?.parts)).toEqual(["Approved: 42."]);
    expect(toolResultsIn(f.llm.requests.at(-1)!).map((r) => r.content)).toEqual([
      expect.stringContaining('"result":42'),
    ]);
  });

  test("deny (the text) answers it too: the tool does not run, the model reads why", async () => {
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1/0" } }] }, { text: "Fine, I won't." });
    const client = await clientOf(approving);
    const paused = asTask(await client.sendMessage(userMessage("1/0")));
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const events = payloads(
      await collect(client.sendMessageStream(userMessage("deny", { contextId: paused.contextId, taskId: paused.id }))),
    );
    const last = events.at(-1)!;
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last.$case === "statusUpdate" && last.value.taskId).toBe(paused.id);
    expect(toolResultsIn(f.llm.requests.at(-1)!).map((r) => r.content)).toEqual([
      expect.stringContaining("the user declined this call"),
    ]);
  });

  test("cancel: a task under way ends canceled; an ended one is not cancelable", async () => {
    f.llm.script({ text: "a long answer ".repeat(40), chunkDelayMs: 100 });
    const client = await clientOf(agent);
    const started = asTask(await client.sendMessage(userMessage("Go on and on.", { returnImmediately: true })));
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status?.state);
    const cancelled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await call("GET", `/runs/${started.id}`)).body.status).toBe("cancelled");
    await expect(client.cancelTask({ tenant: "", id: started.id, metadata: undefined })).rejects.toThrow(
      /already ended/,
    );
  });

  test("resubscribe after a dropped stream: it goes on from the run's events to the answer and the last status", async () => {
    const answer = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    f.llm.script({ text: answer, chunkDelayMs: 30 });
    const client = await clientOf(agent);
    const dropped = new AbortController();
    let taskId = "";
    await expect(
      (async () => {
        for await (const event of client.sendMessageStream(userMessage("Count."), { signal: dropped.signal })) {
          if (event.payload?.$case === "task") {
            taskId = event.payload.value.id;
            dropped.abort();
          }
        }
      })(),
    ).rejects.toThrow();
    expect(taskId).toMatch(/^run_/);
    const events = payloads(await collect(client.resubscribeTask({ tenant: "", id: taskId })));
    expect(events[0]!.$case).toBe("task");
    const artifact = events.find((e) => e.$case === "artifactUpdate");
    expect(artifact?.$case === "artifactUpdate" && textsOf(artifact.value.artifact?.parts)).toEqual([answer]);
    const last = events.at(-1)!;
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Once it ended, a resubscribe answers the ended task.
    const again = payloads(await collect(client.resubscribeTask({ tenant: "", id: taskId })));
    expect(again).toHaveLength(1);
    expect(again[0]!.$case === "task" && again[0]!.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("another tenant's task id is unknown, through its own agent and through this one", async () => {
    f.llm.script({ text: "acme's" });
    const client = await clientOf(agent);
    const task = asTask(await client.sendMessage(userMessage("hi")));
    const betaAgent = `beta-${provider}`;
    await makeAgent(betaAgent, { provider }, "beta");
    const beta = await clientOf(betaAgent, "beta");
    await expect(beta.getTask({ tenant: "", id: task.id })).rejects.toThrow(/does not exist/);
    await expect(beta.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toThrow(/does not exist/);
    // Nor may it continue acme's context.
    await expect(beta.sendMessage(userMessage("mine now", { contextId: task.contextId }))).rejects.toThrow(
      /is not one of agent/,
    );
    // A tenant in the params changes nothing: the key decides.
    const res = await call("POST", `/a2a/${betaAgent}`, {
      tenant: "beta",
      body: { jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: task.id, tenant: "acme" } },
    });
    expect(res.body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32001 } });
  });
});
