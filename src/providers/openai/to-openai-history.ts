import type OpenAI from "openai";
import type { AttachmentData, NewMessage } from "../../core/messages.js";
import { convertToOpenAIMessages } from "./convert-to-openai-messages.js";

/**
 * The whole history exactly as `client.chat.completions.create` takes it
 * (system prompt included as the first message), for
 * `GET /conversations/:id/messages?format=openai`.
 */
export function toOpenAIHistory(
  system: string | null,
  messages: readonly NewMessage[],
  attachments?: AttachmentData,
): { messages: OpenAI.ChatCompletionMessageParam[] } {
  return { messages: convertToOpenAIMessages(system, messages, attachments) };
}
