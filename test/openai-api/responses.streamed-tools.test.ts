/**
 * `/v1/responses` streamed with an agent's server tools: the stream tells
 * the server's calls (`mcp_call`, `mcp_approval_request`) from the client's
 * by the conversation's tools, on a conversation the request makes and on
 * one it goes on in (`previous_response_id`); both providers behind loopd.
 */
import OpenAI from "openai";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { MOCK_PROVIDER: "true" } });

const client = () => new OpenAI({ apiKey: "unused", baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
let agents = 0;

/** The stream's events, each valid, and the final response. */
async function streamed(params: Parameters<OpenAI["responses"]["stream"]>[0]) {
  const stream = client().responses.stream(params);
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) {
    expectStreamingEvent(event);
    events.push(event);
  }
  const final = await stream.finalResponse();
  expectSchema("ResponseResource", final);
  return { events, final };
}

const added = (events: ResponseStreamEvent[]) =>
  events.flatMap((e) => (e.type === "response.output_item.added" ? [e.item.type] : []));

describe.each(["anthropic", "openai"] as const)("/v1/responses streamed through %s", (provider) => {
  test("an agent's tool asks for approval (mcp_approval_request), then runs streamed as mcp_call with its output", async () => {
    const name = `streamer-${provider}-${++agents}`;
    const res = await fetch(`${f.loopd.url}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, provider, tools: ["calculate"], approval_required: ["calculate"] }),
    });
    expect(res.status).toBe(201);
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "It is 42." });

    const asked = await streamed({ model: `agent:${name}`, input: "6*7?" });
    expect(added(asked.events)).toEqual(["mcp_approval_request"]);
    expect(asked.final.output.at(-1)).toMatchObject({ type: "mcp_approval_request", name: "calculate" });

    const approved = await streamed({
      model: `agent:${name}`,
      previous_response_id: asked.final.id,
      input: [{ type: "mcp_approval_response", approval_request_id: asked.final.output.at(-1)!.id!, approve: true }],
    });
    expect(added(approved.events)).toEqual(["mcp_call", "message"]);
    const done = approved.events.find((e) => e.type === "response.output_item.done" && e.item.type === "mcp_call");
    expect(done).toMatchObject({ item: { name: "calculate", output: expect.stringContaining("42"), error: null } });
    expect(approved.final.output_text).toBe("It is 42.");
  });
});
