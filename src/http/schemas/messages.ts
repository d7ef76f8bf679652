import { z } from "zod";
import { documentInputSchema, imageInputSchema } from "../../core/attachment-input.js";
import { messageSchema, textBlockSchema } from "../../core/messages.js";
import { HISTORY_FORMATS } from "../../providers/registry.js";
import { withExamples } from "../openapi.js";
import { budgetSchema, fallbacksSchema, finishSchema, webhookSchema } from "./conversations.js";
import { runSchema } from "./runs.js";
import { expecting, filled, limit, name, onProviderOutageSchema, position } from "./shared.js";

/** Messages, as zod: sending one (which starts a run), listing them, and what a sent message is answered. */

export const toolChoiceSchema = z.union(
  [z.enum(["auto", "none", "required"]), z.strictObject({ name: name() })],
  expecting('"auto", "none", "required" or {"name": "<tool>"}'),
);

const userTextBlock = z.strictObject({ ...textBlockSchema.shape, text: filled() });
/** Text, an image or a document; their bytes are checked when the message is sent (a 400 naming `body.content[i]`). */
const userBlock = z.discriminatedUnion("type", [userTextBlock, imageInputSchema, documentInputSchema]);

export const sendMessageBody = withExamples(
  z.strictObject({
    content: z.union(
      [filled(), z.array(userBlock).min(1, "must hold at least one block")],
      expecting('a non-empty string or an array of blocks ({"type": "text", "text": "…"}, images and documents)'),
    ),
    max_steps: z.number().int().min(1).optional(),
    budget: budgetSchema.optional(),
    finish: finishSchema.nullable().optional(),
    tool_choice: toolChoiceSchema.optional(),
    model: name().max(200).optional(),
    stream: z.boolean().optional(),
    on_busy: z.enum(["reject", "enqueue", "interrupt"]).optional(),
    /** This run's answer to every model being down, instead of the conversation's: `"wait"`: when every model is down the run parks in `waiting` and goes on by itself once a model answers (bounded by `max_seconds`, else `MODEL_OUTAGE_MAX_WAIT_S`); `"fail"` (the default): it ends `failed` with `provider_unavailable`. */
    on_provider_outage: onProviderOutageSchema.optional(),
    /** false (with `stream: false`): 202 with the run at once. */
    wait: z.boolean().optional(),
    /** This run's webhook instead of the conversation's; null: none for this run. */
    webhook: webhookSchema.nullable().optional(),
    /** This run's fallbacks instead of the conversation's; []: none for this run. */
    fallbacks: fallbacksSchema.optional(),
  }),
  {
    "a question the mock answers with a tool": { content: "What time is it in Tokyo?" },
    "streamed, at most 5 model calls": { content: "What is (3+4)^2?", stream: true, max_steps: 5, tool_choice: "auto" },
    "the mock calls an offered tool spelt `name {json}`": { content: 'calculate {"expression": "12*7"}' },
    "text and an image (a 1×1 PNG) as base64": {
      content: [
        { type: "text", text: "What is in this picture?" },
        {
          type: "image",
          source: {
            type: "base64",
            media_type: "image/png",
            data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
          },
        },
      ],
    },
  },
);

export const messagesQuery = z.object({
  after_seq: position().default(0).describe("Messages after this `seq` (the previous page's `next_after_seq`)"),
  limit: limit(1000, 100).describe("Messages per page"),
  format: z
    .enum(HISTORY_FORMATS)
    .optional()
    .describe("The whole history in this provider's own format instead of a page of canonical messages"),
});

export { messageSchema };

export const sendMessageResponse = z.object({
  run: runSchema,
  messages: z.array(messageSchema),
  output_text: z.string(),
});
