import type { z } from "zod";
import type { conversationSchema } from "./conversations.js";
import type { messageSchema, sendMessageResponse } from "./messages.js";
import type { runSchema } from "./runs.js";

/**
 * Examples for /openapi.json, taken from the README's walkthrough on the
 * mock provider. Typed by the schemas they illustrate, so that a change of
 * shape fails the typecheck here, and the OpenAPI linter checks them again.
 */

const CONVERSATION = "conv_0mx3f31orsipb4b4h80aja1l0";
const RUN = "run_0mx3f31q8z4nmoh047w3m0999";
const usage = { input_tokens: 131, output_tokens: 42, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null };

export const conversationExample: z.output<typeof conversationSchema> = {
  id: CONVERSATION,
  created_at: "2026-11-30T15:22:42.126Z",
  updated_at: "2026-11-30T15:22:42.257Z",
  title: "Tokyo trip",
  system: "You are a helpful assistant.",
  provider: "mock",
  model: "loopd-mock",
  tools: ["get_current_time", "calculate", "read_file", "list_files", "search_files"],
  metadata: {},
  approval_required: [],
  client_tools: [],
  action_timeout_s: null,
  budget: null,
  finish: null,
  context: { strategy: "trim", keep_tool_results: 4, max_input_tokens: null },
  caching: true,
  on_provider_outage: "fail",
  usage,
  message_count: 4,
  active_run_id: null,
  chat_id: null,
  webhook: null,
  forked_from: null,
  fallbacks: [],
  agent: null,
  agent_overrides: null,
  agents: [],
  parent: null,
};

export const runExample: z.output<typeof runSchema> = {
  id: RUN,
  conversation_id: CONVERSATION,
  status: "completed",
  stop_reason: "end_turn",
  steps: 2,
  provider: "mock",
  model: "loopd-mock",
  usage,
  models_used: [{ provider: "mock", model: "loopd-mock", steps: 2 }],
  error: null,
  agent: null,
  children: [],
  created_at: "2026-11-30T15:22:42.176Z",
  completed_at: "2026-11-30T15:22:42.257Z",
};

export const pausedRunExample: z.output<typeof runSchema> = {
  ...runExample,
  status: "requires_action",
  stop_reason: null,
  steps: 1,
  completed_at: null,
  required_action: {
    expires_at: "2026-11-30T16:22:42.200Z",
    tool_calls: [{ tool_call_id: "mock_call_1", name: "calculate", input: { expression: "12*7" }, action: "approve" }],
  },
};

const at = { run_id: RUN, created_at: "2026-11-30T15:22:42.176Z" };
export const messagesExample: z.output<typeof messageSchema>[] = [
  {
    id: "msg_0mx3f31qn6ur3gjav0b2r6jgv",
    seq: 1,
    role: "user",
    ...at,
    content: [{ type: "text", text: "What time is it in Tokyo?" }],
  },
  {
    id: "msg_0mx3f31r2pzcsqx2uxfdjn52k",
    seq: 2,
    role: "assistant",
    ...at,
    content: [{ type: "tool_call", id: "mock_call_1", name: "get_current_time", input: { timezone: "Asia/Tokyo" } }],
  },
  {
    id: "msg_0mx3f31s26rvvxo3l1ygaqp27",
    seq: 3,
    role: "tool",
    ...at,
    content: [
      {
        type: "tool_result",
        tool_call_id: "mock_call_1",
        name: "get_current_time",
        content:
          '{"timezone":"Asia/Tokyo","iso":"2026-12-01T00:22:42+09:00","local":"2026-12-01 00:22:42","utc_offset":"+09:00","weekday":"Tuesday"}',
        is_error: false,
      },
    ],
  },
  {
    id: "msg_0mx3f31sc0zbnt1b4si1hvdi4",
    seq: 4,
    role: "assistant",
    ...at,
    content: [{ type: "text", text: "It is 00:22 on Tuesday in Asia/Tokyo." }],
  },
];

export const sendMessageExample: z.output<typeof sendMessageResponse> = {
  run: runExample,
  messages: messagesExample,
  output_text: "It is 00:22 on Tuesday in Asia/Tokyo.",
};

export const answeredExample: z.output<typeof sendMessageResponse> = {
  run: { ...runExample, steps: 2 },
  messages: [
    {
      id: "msg_0mx4k2zq1m0d3c6v9w2s8t4ab",
      seq: 3,
      role: "tool",
      ...at,
      content: [
        {
          type: "tool_result",
          tool_call_id: "mock_call_1",
          name: "calculate",
          content: '{"expression":"12*7","result":84}',
          is_error: false,
        },
      ],
    },
    {
      id: "msg_0mx4k2zq9x7e2b5n8r1u4y7cd",
      seq: 4,
      role: "assistant",
      ...at,
      content: [{ type: "text", text: "12*7 = 84" }],
    },
  ],
  output_text: "12*7 = 84",
};

/** A fork of `conversationExample` after its 4th message. */
export const forkExample = {
  ...conversationExample,
  id: "conv_01j9zfork",
  title: "Tokyo trip, another way",
  message_count: 4,
  forked_from: { conversation_id: conversationExample.id, seq: conversationExample.message_count },
};
