import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, type RecordedRequest, startFakeLlm } from "./server.js";

/** The fake's own contract: one queue for both APIs, respond, reset, close, and driving it from another process. */

const anthropicParams = { model: "claude-test", max_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };
const openAiParams = { model: "gpt-test", messages: [{ role: "user" as const, content: "Hi" }] };

describe("the scripted queue", () => {
  let llm: FakeLlm;
  let anthropic: Anthropic;
  let openai: OpenAI;
  beforeAll(async () => {
    llm = await startFakeLlm();
    anthropic = new Anthropic({ apiKey: "test", baseURL: llm.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: "test", baseURL: `${llm.url}/v1`, maxRetries: 0 });
  });
  afterEach(() => llm.reset());
  afterAll(() => llm.close());

  it("is one FIFO shared by both APIs", async () => {
    llm.script({ text: "first" }, { text: "second" }, { text: "third" });
    expect(llm.pending()).toBe(3);
    const a = await anthropic.messages.create(anthropicParams);
    const b = await openai.chat.completions.create(openAiParams);
    expect(a.content).toEqual([{ type: "text", text: "first" }]);
    expect(b.choices[0]!.message.content).toBe("second");
    expect(llm.pending()).toBe(1);
    expect(llm.requests.map((r) => r.api)).toEqual(["anthropic", "openai"]);
  });

  it("asks respond when the queue is empty, with the recorded request", async () => {
    const seen: RecordedRequest[] = [];
    llm.script({ text: "scripted" });
    llm.respond = (req) => {
      seen.push(req);
      return { text: `echo ${req.body.messages.length}` };
    };
    expect((await anthropic.messages.create(anthropicParams)).content).toEqual([{ type: "text", text: "scripted" }]);
    expect((await anthropic.messages.create(anthropicParams)).content).toEqual([{ type: "text", text: "echo 1" }]);
    expect(seen).toEqual([llm.requests[1]]);
  });

  it("answers 500 'fake llm: no scripted turn' when the queue and respond are both empty", async () => {
    const error = await openai.chat.completions.create(openAiParams).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      message: "fake llm: no scripted turn",
    });
  });

  it("reset clears the queue, the requests and respond", async () => {
    llm.script({ text: "x" });
    llm.respond = () => ({ text: "y" });
    await anthropic.messages.create(anthropicParams);
    const requests = llm.requests;
    llm.reset();
    expect(llm.pending()).toBe(0);
    expect(llm.respond).toBeNull();
    expect(requests).toHaveLength(0);
  });

  it("adds retry-after-ms: 5 to 429 and 5xx answers, never x-should-retry: false, and lets a turn override headers", async () => {
    llm.script(
      { status: 429 },
      { status: 503 },
      { status: 400 },
      { status: 429, headers: { "retry-after-ms": "20", "x-extra": "1" } },
    );
    const post = () =>
      fetch(`${llm.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(anthropicParams),
      });
    const answers = [await post(), await post(), await post(), await post()];
    expect(answers.map((r) => r.status)).toEqual([429, 503, 400, 429]);
    expect(answers.map((r) => r.headers.get("retry-after-ms"))).toEqual(["5", "5", null, "20"]);
    expect(answers.map((r) => r.headers.get("x-should-retry"))).toEqual([null, null, null, null]);
    expect(answers[3]!.headers.get("x-extra")).toBe("1");
    expect(await answers[0]!.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(answers[0]!.headers.get("request-id")).toMatch(/^req_011C/);
  });
});

describe("broken streams", () => {
  let llm: FakeLlm;
  beforeAll(async () => {
    llm = await startFakeLlm();
  });
  afterEach(() => llm.reset());
  afterAll(() => llm.close());

  const apis = [
    {
      api: "anthropic",
      path: "/v1/messages",
      params: anthropicParams,
      keepAlive: 'event: ping\ndata: {"type":"ping"}',
    },
    { api: "openai", path: "/v1/chat/completions", params: openAiParams, keepAlive: ": keep-alive" },
  ] as const;
  const post = (path: string, params: object) =>
    fetch(`${llm.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...params, stream: true }),
    });
  /** The SSE blocks of a whole answer, to compare a broken one with. */
  const wholeStream = async (path: string, params: object) => {
    llm.script({ text: "one two three four five" });
    return blocksOf(await (await post(path, params)).text());
  };

  it.each(apis)(
    "$api: stallAfterChunks sends that many events, then only keep-alives until the client leaves",
    async ({ path, params, keepAlive }) => {
      const whole = await wholeStream(path, params);
      llm.script({ text: "one two three four five", stallAfterChunks: 3, keepAliveMs: 10 });
      const res = await post(path, params);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (blocksOf(text).length < 6) text += decoder.decode((await reader.read()).value, { stream: true });
      await reader.cancel();
      const blocks = blocksOf(text);
      expect(blocks.slice(0, 3).map(withoutIds)).toEqual(whole.slice(0, 3).map(withoutIds));
      expect(blocks.slice(3)).toEqual(Array(blocks.length - 3).fill(keepAlive));
    },
  );

  it.each(apis)(
    "$api: truncateAfterChunks ends the response cleanly before the stream's own end",
    async ({ api, path, params }) => {
      const whole = await wholeStream(path, params);
      llm.script({ toolCalls: [{ name: "lookup", input: { q: "a long query" } }], truncateAfterChunks: 4 });
      const res = await post(path, params);
      expect(res.status).toBe(200);
      const blocks = blocksOf(await res.text());
      expect(blocks).toHaveLength(4);
      expect(whole.length).toBeGreaterThan(4);
      const text = blocks.join("\n");
      if (api === "anthropic") expect(text).not.toContain("message_stop");
      else expect(text).not.toMatch(/\[DONE\]|"finish_reason":"/);
    },
  );
});

/** The blank-line separated blocks of an SSE body. */
const blocksOf = (body: string) => body.split("\n\n").slice(0, -1);
/** Ids, timestamps and obfuscation differ between two answers; the rest must not. */
const withoutIds = (block: string) =>
  block.replace(/"(id|created|obfuscation|system_fingerprint)":("[^"]*"|\d+)/g, '"$1":_');

describe("closing", () => {
  it("ends requests that are still hanging, streamed or not, and resolves", async () => {
    const llm = await startFakeLlm();
    llm.script({ hang: true }, { hang: true });
    const body = (stream: boolean) => JSON.stringify({ ...anthropicParams, stream });
    const post = (stream: boolean) =>
      fetch(`${llm.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body(stream),
      });
    const streaming = await post(true); // headers arrive, then nothing
    const plain = post(false).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(llm.pending()).toBe(0);
    await llm.close();
    await expect(streaming.text()).rejects.toThrow();
    expect(await plain).toBeInstanceOf(Error);
  });
});

describe("driving it from another process", () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });

  it("starts from main.ts with FAKE_LLM_SCRIPT, takes POST /_script and reports GET /_requests", async () => {
    child = spawn(process.execPath, ["--import", "tsx", new URL("main.ts", import.meta.url).pathname], {
      env: { ...process.env, PORT: "0", FAKE_LLM_SCRIPT: JSON.stringify([{ text: "from the env" }]) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout!.setEncoding("utf8");
    const url = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on("data", (data: string) => {
        stdout += data;
        const match = /FAKE_LLM_URL=(\S+)\n/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child!.once("exit", (code) => reject(new Error(`main.ts exited with ${code}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const scripted = await fetch(`${url}/_script`, {
      method: "POST",
      body: JSON.stringify([{ text: "from POST /_script" }]),
    });
    expect(await scripted.json()).toEqual({ pending: 2 });

    const anthropic = new Anthropic({ apiKey: "test", baseURL: url });
    const openai = new OpenAI({ apiKey: "test", baseURL: `${url}/v1` });
    expect((await anthropic.messages.create(anthropicParams)).content).toEqual([
      { type: "text", text: "from the env" },
    ]);
    expect((await openai.chat.completions.create(openAiParams)).choices[0]!.message.content).toBe("from POST /_script");

    const requests = (await (await fetch(`${url}/_requests`)).json()) as RecordedRequest[];
    expect(requests.map((r) => [r.api, r.body.model])).toEqual([
      ["anthropic", "claude-test"],
      ["openai", "gpt-test"],
    ]);
    expect(await (await fetch(`${url}/_pending`)).json()).toEqual({ pending: 0 });
    await fetch(`${url}/_reset`, { method: "POST" });
    expect(await (await fetch(`${url}/_requests`)).json()).toEqual([]);

    child.kill("SIGTERM");
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
  });
});
