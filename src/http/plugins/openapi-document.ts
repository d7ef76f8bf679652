import swagger, { type SwaggerTransform, type SwaggerTransformObject } from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { STREAM, type StreamMark } from "../openapi.js";

/** /openapi.json, generated from the routes' zod schemas; the schemas' marks (../openapi.ts) become its stream contents. */

const UI_STREAM_DESCRIPTION =
  "The AI SDK's UI message stream (`text/event-stream`, header `x-vercel-ai-ui-message-stream: v1`): one JSON chunk per `data:` line — " +
  "`start` (`messageId`: the run id), `start-step`/`finish-step` around each model call, `text-start`/`text-delta`/`text-end`, `tool-input-start` and `tool-input-available` for each proposed call, " +
  "`tool-output-available`, `tool-output-error` or `tool-output-denied` for each result, `tool-approval-request` for a call waiting for approval, `data-notice` for loopd's notices, `error` for a failed run, " +
  "`finish` with `messageMetadata: {run_id, status, stop_reason, usage}`; then `data: [DONE]`.";

const UI_STREAM_EXAMPLE = [
  'data: {"type":"start","messageId":"run_0mx3f39yflkqzm2smszx26kqq","messageMetadata":{"run_id":"run_0mx3f39yflkqzm2smszx26kqq"}}',
  'data: {"type":"start-step"}',
  'data: {"type":"text-start","id":"run_0mx3f39yflkqzm2smszx26kqq:1:3"}',
  'data: {"type":"text-delta","id":"run_0mx3f39yflkqzm2smszx26kqq:1:3","delta":"Hello"}',
  'data: {"type":"text-end","id":"run_0mx3f39yflkqzm2smszx26kqq:1:3"}',
  'data: {"type":"finish-step"}',
  'data: {"type":"finish","finishReason":"stop","messageMetadata":{"run_id":"run_0mx3f39yflkqzm2smszx26kqq","status":"completed","stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":null}}}',
  "data: [DONE]",
  "",
].join("\n\n");

export const EVENT_STREAM_DESCRIPTION = [
  "Server-sent events (`text/event-stream`), one per step of the run; `id` is the run's event number (1, 2, 3, … with no gaps), `data` is JSON:",
  "",
  "| event | data |",
  "|---|---|",
  "| `run.created` | `{run}` |",
  "| `message.created` | `{message}`: every message as it is saved (user, assistant, tool) |",
  "| `text.delta` | `{delta}`: assistant text as the model streams it |",
  "| `tool_call.started` | `{tool_call_id, name, input}` |",
  "| `tool_call.completed` | `{tool_call_id, name, is_error, content, duration_ms}` |",
  "| `run.action_answered` | `{actor, approvals, tool_outputs}`: a paused run's answer |",
  "| `step.restarted` | `{step, reason}`: a model call cut off by a crash, an attempt that failed mid-answer, or an outage waited out is made again; drop its text deltas |",
  '| `run.waiting` | `{run}`: every model is down and the run (`on_provider_outage: "wait"`) waits it out, `run.outage` saying when it is probed next; the stream stays open and goes on when a model answers |',
  "| `model.retry` | `{step, attempt, provider, model, delay_ms, reason: {status, type, message}}`: a model call failed and is made again after `delay_ms` |",
  "| `model.fallback` | `{step, from: {provider, model}, to: {provider, model}, reason: {code, status, type, message}}`: the step goes on with the next model of its chain (`code`: `attempts_used_up`, `capacity`, `context_window`, `retry_after_too_long`, `cooling_down`) |",
  "| `run.completed`, `run.incomplete`, `run.failed`, `run.cancelled`, `run.requires_action` | `{run}`: the last event; the stream then ends |",
  "| `conversation.deleted` | `{conversation_id, run_id}`: the conversation was deleted while the stream was open; the last event |",
  "",
  "A comment line `: ping` comes at least every 15 s while idle. The run belongs to the server: a client that disconnects resumes with `GET …/runs/{run_id}/events` and `Last-Event-ID`.",
].join("\n");

const EVENT_STREAM_EXAMPLE = [
  "id: 1",
  "event: run.created",
  'data: {"run":{"id":"run_0mx3f39yflkqzm2smszx26kqq","status":"running","steps":0}}',
  "",
  "id: 2",
  "event: message.created",
  'data: {"message":{"id":"msg_0mx3f39yk1g6917kwflmhch24","seq":1,"role":"user","content":[{"type":"text","text":"What is (3+4)^2?"}]}}',
  "",
  "id: 3",
  "event: tool_call.started",
  'data: {"tool_call_id":"mock_call_1","name":"calculate","input":{"expression":"(3+4)^2"}}',
  "",
  "id: 4",
  "event: tool_call.completed",
  'data: {"tool_call_id":"mock_call_1","name":"calculate","is_error":false,"content":"{\\"expression\\":\\"(3+4)^2\\",\\"result\\":49}","duration_ms":1}',
  "",
  "id: 5",
  "event: text.delta",
  'data: {"delta":"(3+4)^2 = 49"}',
  "",
  "id: 6",
  "event: run.completed",
  'data: {"run":{"id":"run_0mx3f39yflkqzm2smszx26kqq","status":"completed","stop_reason":"end_turn","steps":2}}',
  "",
  "",
].join("\n");

type JsonSchema = Record<string, unknown>;

/**
 * jsonSchemaTransform, then: a 204 has no body (zod's `null` comes out as a
 * nullable type, which the generator would show as JSON), and each response
 * marked as a stream gets its `text/event-stream` content.
 */
const describeRoute: SwaggerTransform = (input) => {
  const transformed = jsonSchemaTransform(input);
  const responses = (transformed.schema as { response?: Record<string, JsonSchema> } | undefined)?.response;
  for (const [status, schema] of Object.entries(responses ?? {})) {
    const { [STREAM]: mark, description, examples, ...json } = schema;
    if (status === "204") responses![status] = { type: "null", description };
    if (mark === undefined) continue;
    if ((mark as StreamMark) === "text") {
      responses![status] = {
        description,
        content: {
          "text/plain": { schema: { type: "string" }, ...(Array.isArray(examples) && { example: examples[0] }) },
        },
      };
      continue;
    }
    if ((mark as StreamMark) === "bytes") {
      const binary = { schema: { type: "string", format: "binary" } };
      responses![status] = {
        description,
        content: Object.fromEntries((json.mediaTypes as string[]).map((t) => [t, binary])),
      };
      continue;
    }
    if ((mark as StreamMark) === "ui") {
      responses![status] = {
        description,
        content: {
          "text/event-stream": {
            schema: { type: "string", description: UI_STREAM_DESCRIPTION },
            example: UI_STREAM_EXAMPLE,
          },
        },
      };
      continue;
    }
    const events = { schema: { type: "string", description: EVENT_STREAM_DESCRIPTION }, example: EVENT_STREAM_EXAMPLE };
    const content =
      (mark as StreamMark) === "events"
        ? { "text/event-stream": events }
        : {
            "application/json": { schema: json, ...(Array.isArray(examples) && { example: examples[0] }) },
            "text/event-stream": events,
          };
    responses![status] = { description, content };
  }
  return transformed;
};

/** A body whose schema takes null may be left out (`POST /conversations`): the generator marks every body required. */
const describeDocument: SwaggerTransformObject = (input) => {
  const document = "openapiObject" in input ? input.openapiObject : input.swaggerObject;
  for (const path of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(path ?? {}) as Array<{
      requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
    }>) {
      const body = operation.requestBody;
      if (body?.content?.["application/json"]?.schema?.nullable === true) body.required = false;
    }
  }
  return document;
};

/** Registers the generator; call before the routes are added, as it learns them as they are. */
export async function useOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: "loopd",
        version: "0.1.0",
        description:
          "Runs LLM tool-calling agents server-side and never loses a conversation. Send a message to a conversation; loopd calls the model, runs the tools it asks for and saves every step. " +
          "Every non-2xx answer has the body `{error: {code, message, details}}`. With no model key the `mock` provider answers offline (with API keys on, only when `MOCK_PROVIDER=true`).",
        license: { name: "MIT", url: "https://opensource.org/licenses/MIT" },
      },
      servers: [
        { url: "/", description: "the server that serves this document" },
        { url: "http://127.0.0.1:3000", description: "a local `npm start`" },
      ],
      components: {
        securitySchemes: {
          apiKey: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key (`lpd_…`, from `npm run keys -- create --tenant <name>`) as `Authorization: Bearer <key>`. Needed whenever keys are on (`API_KEYS_REQUIRED`, on by default off loopback); each key sees its tenant's data only.",
          },
          apiKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "x-api-key",
            description: "The same key in `x-api-key`.",
          },
        },
      },
      security: [{ apiKey: [] }, { apiKeyHeader: [] }],
      tags: [
        { name: "agents", description: "Agents: named, versioned configurations conversations start from" },
        { name: "conversations", description: "Conversations: their settings and tools" },
        {
          name: "messages",
          description: "Sending a message starts a run; the history, canonical or in a provider's format",
        },
        { name: "runs", description: "Runs: status, cancel, answers to a pause, the event stream" },
        { name: "operations", description: "Health and this document" },
        { name: "tools", description: "The tools a conversation may use, and the MCP servers behind some of them" },
        { name: "usage", description: "What a tenant's runs used and cost" },
        {
          name: "admin",
          description:
            "API keys, and the MCP servers' stderr, with `ADMIN_TOKEN` only (these routes exist only when it is set)",
        },
        { name: "webhooks", description: "The tenant's own webhook secret: read it, rotate it" },
        {
          name: "mcp-server",
          description:
            "loopd as an MCP server: the tenant's agents as tools, over Streamable HTTP (docs/mcp-server.md)",
        },
        {
          name: "OpenAI-compatible API",
          description:
            "OpenAI's API over loopd's (`/v1/*`): OpenAI's shapes, times in Unix seconds, OpenAI's error body",
        },
      ],
    },
    transform: describeRoute,
    transformObject: describeDocument,
  });
}
