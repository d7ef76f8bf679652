import { describe, expect, test } from "vitest";
import { redactorOf } from "../../../src/util/redact.js";
import { runOverHttp } from "../../../src/replay/run-over-http.js";
import { storedTraceEntries } from "../../../src/runs/trace/read-trace.js";
import { api } from "../../support/helpers/api.js";
import { b64, png } from "../../support/helpers/test-images.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd({ listen: true });
const client = () => api(f.loopd.app);
const PNG = png(48, 32, 7);
const IMAGE = { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } };

/** The JSON a request body is on the wire: what the fake LLM parsed. */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));

describe.each(["anthropic", "openai"] as const)("a run on %s whose history holds an image", (provider) => {
  async function recordedRun() {
    const conv = await client().createConversation({ provider, tools: ["calculate"] });
    f.llm.script({ text: "A gradient." });
    await client().send(conv.id, { content: [{ type: "text", text: "What is it?" }, IMAGE] });
    f.llm.reset();
    f.llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
      { text: "42, and still a gradient." },
    );
    const body = (await client().send(conv.id, { content: "And 6*7?" })).json();
    expect(body.run).toMatchObject({ status: "completed", steps: 2 });
    const sent = f.llm.requests.map((r) => r.body);
    expect(sent).toHaveLength(2);
    for (const request of sent) expect(JSON.stringify(request)).toContain(b64(PNG));
    f.llm.reset();
    return { conv, run: (await f.loopd.services.store.runs.get(body.run.id))!, sent };
  }

  test("?expand=requests rebuilds each request with the image's bytes, exactly as the model received it, verified", async () => {
    const { conv, run, sent } = await recordedRun();
    const res = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/runs/${run.id}/trace?expand=requests`,
    });
    expect(res.statusCode).toBe(200);
    const calls = (res.json().spans as any[]).filter((s) => s.type === "model.call");
    expect(calls).toHaveLength(2);
    calls.forEach((call, i) => {
      expect(call.request_verified).toBe(true);
      expect(asJson(call.request.body)).toEqual(sent[i]);
    });
    expect(res.body).not.toContain("not loaded");
  });

  test("replay, from the database or through the API, sends the image's bytes again", async () => {
    const { run, sent } = await recordedRun();
    const fromStore = [];
    for await (const e of storedTraceEntries({
      store: f.loopd.services.store,
      run,
      tenant: "default",
      redactor: redactorOf(f.loopd.config),
    })) {
      if (e.request) fromStore.push(asJson(f.loopd.services.providers[provider].buildRequest(e.request)));
    }
    const fromApi = [];
    for await (const e of (await runOverHttp({ url: f.loopd.url, runId: run.id })).entries) {
      if (e.request) fromApi.push(asJson(f.loopd.services.providers[provider].buildRequest(e.request)));
    }
    expect(fromStore).toEqual(sent);
    expect(fromApi).toEqual(sent);
  });
});
