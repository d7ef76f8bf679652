import type Anthropic from "@anthropic-ai/sdk";
import type { AttachmentData, NewMessage } from "../../core/messages.js";
import { convertToAnthropicMessages } from "./convert-to-anthropic-messages.js";

/**
 * The whole history exactly as `client.messages.create` takes it, for
 * `GET /conversations/:id/messages?format=anthropic`. `system` is `null` when
 * the conversation has none (leave the param out in that case).
 */
export function toAnthropicHistory(
  system: string | null,
  messages: readonly NewMessage[],
  attachments?: AttachmentData,
): { system: string | null; messages: Anthropic.MessageParam[] } {
  return { system: system?.trim() ? system : null, messages: convertToAnthropicMessages(messages, attachments) };
}
