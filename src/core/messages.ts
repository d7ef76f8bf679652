import { z } from "zod";

/**
 * The canonical, provider-neutral history (see the API contract, "Message").
 * Providers convert to and from their wire formats; the rest of loopd only
 * ever sees these shapes.
 */

export const textBlockSchema = z.object({
  type: z.literal("text"),
  text: z.string(),
});

export const toolCallBlockSchema = z.object({
  type: z.literal("tool_call"),
  /** The provider's id, verbatim (`toolu_…`, `call_…`). */
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  /**
   * The arguments exactly as the model sent them when they were not a JSON
   * object; `input` is then `{}`. Kept so the executor can tell the model what
   * was wrong and so the OpenAI history replays what the model really said.
   */
  raw_arguments: z.string().optional(),
});

export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const DOCUMENT_MEDIA_TYPES = ["application/pdf", "text/plain"] as const;

/** An image the user sent (or a tool returned), stored as an attachment of the conversation (`GET …/attachments/:attachment_id`). */
export const imageBlockSchema = z.object({
  type: z.literal("image"),
  attachment_id: z.string(),
  media_type: z.enum(IMAGE_MEDIA_TYPES),
  bytes: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
});

export const toolResultBlockSchema = z.object({
  type: z.literal("tool_result"),
  tool_call_id: z.string(),
  name: z.string(),
  content: z.string(),
  is_error: z.boolean(),
  /** The images the result held (an MCP tool's), kept as attachments; `content` is its text. Absent: none. */
  images: z.array(imageBlockSchema).optional(),
});

/** An image by its URL, kept as it came: the provider fetches it, loopd never does. */
export const imageUrlBlockSchema = z.object({
  type: z.literal("image"),
  source: z.object({ type: z.literal("url"), url: z.string() }),
});

/** A document the user sent (a PDF or plain text), stored as an attachment of the conversation. */
export const documentBlockSchema = z.object({
  type: z.literal("document"),
  attachment_id: z.string(),
  media_type: z.enum(DOCUMENT_MEDIA_TYPES),
  bytes: z.number().int(),
  title: z.string().optional(),
});

export type TextBlock = z.infer<typeof textBlockSchema>;
export type ImageBlock = z.infer<typeof imageBlockSchema>;
export type ImageUrlBlock = z.infer<typeof imageUrlBlockSchema>;
export type DocumentBlock = z.infer<typeof documentBlockSchema>;
/** What a user message holds: text, and what the user attached. */
export type UserBlock = TextBlock | ImageBlock | ImageUrlBlock | DocumentBlock;
/** A block whose bytes are an attachment of the conversation. */
export type AttachedBlock = ImageBlock | DocumentBlock;
export const isAttached = (block: { type: string }): block is AttachedBlock => "attachment_id" in block;

/**
 * The bytes of the attachments a history refers to, as base64 by
 * attachment id: read once per run (or per request showing a history), so
 * that each model call re-sends old images without reading or encoding them again.
 */
export type AttachmentData = ReadonlyMap<string, string>;

/** The ids of the attachments `history` refers to (a user's, and the images of tool results), each once. */
export function attachmentIdsOf(history: readonly NewMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of history) for (const id of attachmentsIn(message)) ids.add(id);
  return ids;
}

/** Whether the message refers to attachments. */
export const refersToAttachments = (message: NewMessage): boolean => !attachmentsIn(message).next().done;

/** The ids of the attachments one message refers to. */
function* attachmentsIn(message: NewMessage): Generator<string> {
  if (message.role === "user") {
    for (const block of message.content) if (isAttached(block)) yield block.attachment_id;
  } else if (message.role === "tool") {
    for (const image of message.content[0].images ?? []) yield image.attachment_id;
  }
}

/** The block that refers to a stored attachment (its row's fields); a document may have a title. */
export function attachedBlockOf(
  row: { id: string; bytes: number; mediaType: string; width: number | null; height: number | null },
  { kind, title }: { kind: "image" | "document"; title?: string | undefined },
): AttachedBlock {
  const common = { attachment_id: row.id, bytes: row.bytes };
  return kind === "image"
    ? ({ type: "image", ...common, media_type: row.mediaType, width: row.width!, height: row.height! } as ImageBlock)
    : ({
        type: "document",
        ...common,
        media_type: row.mediaType,
        ...(title !== undefined && { title }),
      } as DocumentBlock);
}
export type ToolCallBlock = z.infer<typeof toolCallBlockSchema>;
export type ToolResultBlock = z.infer<typeof toolResultBlockSchema>;
export type AssistantBlock = TextBlock | ToolCallBlock;

/** The messages a summary stands for in the context: seq `from_seq` … `to_seq`. */
export interface Summarizes {
  from_seq: number;
  to_seq: number;
}

export type NewMessage = (
  | {
      role: "user";
      content: UserBlock[];
      /** Written by loopd itself, sent as user text: a grace turn's `notice`, or the `summary` of older messages (see `summarizes`). */
      kind?: "notice" | "summary";
      /** A summary's: the messages it condenses, which later calls are sent it in place of. */
      summarizes?: Summarizes;
    }
  | { role: "assistant"; content: AssistantBlock[] }
  | { role: "tool"; content: [ToolResultBlock] }
) & {
  /**
   * Kept in the history, never sent to a model again: `refusal`, part of a
   * turn the provider refused; `deleted`, an item a client deleted
   * (`DELETE /v1/conversations/:id/items/:item_id`), its content emptied.
   */
  excluded?: Exclusion;
};

/** Why a stored message is never sent to a model again. */
export const EXCLUSIONS = ["refusal", "deleted"] as const;
export type Exclusion = (typeof EXCLUSIONS)[number];

/**
 * The history as a model may be sent it: without the turns a provider
 * refused (it refuses every later request whose context still holds one).
 */
export const sendable = (history: NewMessage[]): NewMessage[] =>
  history.some((m) => m.excluded) ? history.filter((m) => !m.excluded) : history;

export type Role = NewMessage["role"];

/** A user-role message loopd wrote (a notice, a summary), not the user. */
export const isLoopdMessage = (m: NewMessage): boolean => m.role === "user" && m.kind !== undefined;

/** What a chat shows of a message loopd wrote: a notice's text; for a summary, what it stands for. */
export const noteOf = (m: NewMessage): string =>
  m.role === "user" && m.kind === "summary" && m.summarizes
    ? `Messages ${m.summarizes.from_seq}–${m.summarizes.to_seq} were summarised to fit the context window; the model now reads the summary in their place.`
    : textOf(m);

/** A message as stored: a row of the conversation's history. */
export type Message = NewMessage & {
  id: string;
  seq: number;
  run_id: string | null;
  created_at: string;
};

export const messageSchema = z.object({
  id: z.string(),
  seq: z.number().int(),
  role: z.enum(["user", "assistant", "tool"]),
  run_id: z.string().nullable(),
  created_at: z.string(),
  kind: z.enum(["notice", "summary"]).optional(),
  summarizes: z.object({ from_seq: z.number().int(), to_seq: z.number().int() }).optional(),
  excluded: z.enum(EXCLUSIONS).optional(),
  content: z.array(
    z.union([
      textBlockSchema,
      toolCallBlockSchema,
      toolResultBlockSchema,
      imageBlockSchema,
      imageUrlBlockSchema,
      documentBlockSchema,
    ]),
  ),
});

export function toolCallsOf(message: NewMessage): ToolCallBlock[] {
  if (message.role !== "assistant") return [];
  return message.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
}

export function textOf(message: NewMessage): string {
  if (message.role === "tool") return "";
  const blocks: readonly (AssistantBlock | UserBlock)[] = message.content;
  return blocks
    .filter((b): b is TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("");
}
