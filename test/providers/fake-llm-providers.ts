import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { NewMessage } from "../../src/core/messages.js";
import type { ModelProvider, ModelRequest, ToolSpec } from "../../src/core/model-provider.js";
import { createAnthropicProvider } from "../../src/providers/anthropic/index.js";
import { createOpenAIProvider } from "../../src/providers/openai/index.js";
import type { FakeLlm } from "../support/fake-llm/server.js";

/** The real providers, through the real SDKs, pointed at the fake LLM server. */
export function anthropicAgainst(llm: FakeLlm, { maxRetries }: { maxRetries?: number } = {}): ModelProvider {
  return createAnthropicProvider({
    client: new Anthropic({ apiKey: "test", baseURL: llm.url }),
    ...(maxRetries === undefined ? {} : { maxRetries }),
  });
}

export function openaiAgainst(llm: FakeLlm, { maxRetries }: { maxRetries?: number } = {}): ModelProvider {
  return createOpenAIProvider({
    client: new OpenAI({ apiKey: "test", baseURL: `${llm.url}/v1` }),
    ...(maxRetries === undefined ? {} : { maxRetries }),
  });
}

export const tools: ToolSpec[] = [
  {
    name: "get_current_time",
    description: "The current time in an IANA timezone",
    inputSchema: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] },
  },
  {
    name: "calculate",
    description: "Evaluate an arithmetic expression",
    inputSchema: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
  },
];

export function modelRequest(messages: NewMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "test-model", system: null, messages, tools, toolChoice: "auto", maxTokens: 512, ...extra };
}
