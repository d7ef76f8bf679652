import { z } from "zod";
import { isPgSafe } from "../../store/pg-safe.js";
import { conversationFields } from "../schemas/conversations.js";
import { SAFE_MESSAGE } from "../schemas/shared.js";
import { sendMessageBody } from "../schemas/messages.js";

/**
 * A UI message part as the AI SDK sends it: only the fields loopd reads are
 * checked (a text part's text, a file part's media type, url and filename, a
 * tool part's call id, state, approval and output); the rest of a part passes, as the SDK adds fields over versions.
 */
const uiPart = z.looseObject({
  type: z.string().max(200),
  text: z.string().max(1_000_000).refine(isPgSafe, SAFE_MESSAGE).optional(),
  toolCallId: z.string().max(200).optional(),
  state: z.string().max(50).optional(),
  approval: z
    .looseObject({
      id: z.string().max(200),
      approved: z.boolean().optional(),
      reason: z.string().max(10_000).refine(isPgSafe, SAFE_MESSAGE).optional(),
    })
    .optional(),
  output: z.unknown().optional(),
  errorText: z.string().max(1_000_000).refine(isPgSafe, SAFE_MESSAGE).optional(),
  // A file part's: its url a data: URL (as long as the body may be) or an http(s) URL, read by `blockOfFilePart`.
  mediaType: z.string().max(200).optional(),
  url: z.string().optional(),
  filename: z.string().max(10_000).optional(),
});

const uiMessage = z.looseObject({
  id: z.string().max(200),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(uiPart).max(2_000),
});

/** The chat id: a conversation id, or the AI SDK's own id for a chat. */
export const chatId = () =>
  z.string().min(1, "must not be empty").max(200, "must be at most 200 characters").refine(isPgSafe, SAFE_MESSAGE);

/**
 * What `DefaultChatTransport` sends (`id`, `messages`, `trigger`,
 * `messageId`), the transport's `body` fields loopd reads (a new chat's
 * `conversation`; a run's `max_steps`, `budget`, `finish`, `tool_choice`,
 * `model`), and whatever else an app adds to its body, which is ignored.
 */
export const uiChatBody = z.looseObject({
  id: chatId(),
  messages: z.array(uiMessage).min(1, "must hold at least the new message").max(10_000),
  trigger: z.enum(["submit-message", "regenerate-message"]),
  messageId: z.string().max(200).optional(),
  conversation: conversationFields.optional(),
  ...sendMessageBody.pick({
    max_steps: true,
    budget: true,
    finish: true,
    tool_choice: true,
    model: true,
    on_busy: true,
  }).shape,
});

export type UiChatBody = z.infer<typeof uiChatBody>;

export const uiChatParams = z.object({
  id: chatId().describe("The chat's id: a conversation id (`conv_…`) or an AI SDK chat id"),
});
