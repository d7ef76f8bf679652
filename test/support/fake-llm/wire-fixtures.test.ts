import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeTurn } from "./fake-turn.js";
import { type FakeLlm, startFakeLlm } from "./server.js";
import { parseSse } from "./sse-event.js";

/**
 * The fake's streams have the structure of recorded real streams
 * (fixtures/*.chunks.txt): the same order of events and, in every event,
 * the same keys with the same JSON types. Ids and values are not compared.
 */

type Json = Record<string, unknown>;

const fixture = (name: string): Json[] =>
  readFileSync(new URL(`fixtures/${name}.chunks.txt`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);

/** Every key path with its JSON type: `message.usage.input_tokens:number`, `choices[].delta:object`. */
function keyPaths(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return [`${path}:array`, ...value.flatMap((item) => keyPaths(item, `${path}[]`))];
  if (value !== null && typeof value === "object") {
    return [
      `${path}:object`,
      ...Object.entries(value).flatMap(([key, item]) => keyPaths(item, path ? `${path}.${key}` : key)),
    ];
  }
  return [`${path}:${value === null ? "null" : typeof value}`];
}

/** Key paths of a whole stream; Anthropic's are namespaced by event type. */
function streamShape(events: Json[], api: "anthropic" | "openai"): Set<string> {
  return new Set(
    events.flatMap((event) =>
      keyPaths(event).map((path) => (api === "anthropic" ? `${String(event.type)}/${path}` : path)),
    ),
  );
}

/** What each OpenAI chunk does, so the order of a stream can be compared. */
function chunkKind(chunk: Json): string {
  const choices = chunk.choices as Array<{ delta: Json & { tool_calls?: Json[] }; finish_reason: unknown }>;
  const choice = choices[0];
  if (!choice) return "usage";
  if (choice.finish_reason !== null) return "finish";
  if (choice.delta.role !== undefined) return "role";
  if (choice.delta.tool_calls?.[0]?.id !== undefined) return "tool-call-start";
  if (choice.delta.tool_calls !== undefined) return "tool-call-arguments";
  return "content";
}

/** The order of a stream, with repeats and Anthropic's pings (whose position varies) folded away. */
function streamOrder(events: Json[], api: "anthropic" | "openai"): string[] {
  const kinds = events.map((e) => (api === "anthropic" ? String(e.type) : chunkKind(e))).filter((k) => k !== "ping");
  return kinds.filter((kind, i) => kind !== kinds[i - 1]);
}

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(() => llm.close());

/** The raw SSE events the fake sends for one streamed turn. */
async function streamFromFake(api: "anthropic" | "openai", turn: FakeTurn, extra: Json = {}) {
  llm.script(turn);
  const path = api === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
  const response = await fetch(`${llm.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "m",
      max_tokens: 100,
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      ...extra,
    }),
  });
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  return parseSse(await response.text());
}

const weatherInput = { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] };

describe.each([
  {
    api: "anthropic" as const,
    name: "anthropic-text",
    turn: { text: "Hello! I'm doing well, thank you for asking." },
    extra: {},
  },
  {
    api: "anthropic" as const,
    name: "anthropic-tool-use",
    turn: { toolCalls: [{ name: "json", input: weatherInput }] },
    extra: {},
  },
  {
    api: "openai" as const,
    name: "openai-text",
    turn: { text: "**Holiday Name:** Harmony Day" },
    extra: { stream_options: { include_usage: true } },
  },
  {
    api: "openai" as const,
    name: "openai-tool-calls",
    turn: { toolCalls: [{ name: "get_weather", input: { location: "San Francisco, CA" } }] },
    extra: {},
  },
])("$name", ({ api, name, turn, extra }) => {
  const recorded = fixture(name);
  const allRecorded = (
    api === "anthropic" ? ["anthropic-text", "anthropic-tool-use"] : ["openai-text", "openai-tool-calls"]
  ).flatMap(fixture);

  it("streams events in the recorded order", async () => {
    const events = await streamFromFake(api, turn, extra);
    const ours = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Json);
    expect(streamOrder(ours, api)).toEqual(streamOrder(recorded, api));
  });

  it("has every recorded key with its type, and no key the recordings lack", async () => {
    const events = await streamFromFake(api, turn, extra);
    const ours = streamShape(
      events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Json),
      api,
    );
    expect([...streamShape(recorded, api)].filter((path) => !ours.has(path))).toEqual([]);
    const known = streamShape(allRecorded, api);
    expect([...ours].filter((path) => !known.has(path))).toEqual([]);
  });

  it("frames events as the real API does", async () => {
    const events = await streamFromFake(api, turn, extra);
    if (api === "anthropic") {
      for (const e of events) expect(e.event).toBe((JSON.parse(e.data) as Json).type);
      expect(events.some((e) => e.event === "ping")).toBe(true);
    } else {
      expect(events.every((e) => e.event === undefined)).toBe(true);
      expect(events.at(-1)!.data).toBe("[DONE]");
    }
  });
});
