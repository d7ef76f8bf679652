import { z } from "zod";
import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES, type TextBlock } from "./messages.js";

/**
 * Images and documents as a client sends them in a user message (the API
 * contract, "Images and documents"). Only their shape is checked here; their
 * bytes are checked when the message is sent (`checkUserContent`).
 */

/** The longest image URL and document title a client may send (a file part of the AI SDK's too). */
export const MAX_IMAGE_URL_CHARS = 2_000;
export const MAX_DOCUMENT_TITLE_CHARS = 500;

const base64Source = <T extends readonly [string, ...string[]]>(mediaTypes: T) =>
  z.strictObject({ type: z.literal("base64"), media_type: z.enum(mediaTypes), data: z.string() });

export const imageInputSchema = z.strictObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    base64Source(IMAGE_MEDIA_TYPES),
    z.strictObject({ type: z.literal("url"), url: z.string().max(MAX_IMAGE_URL_CHARS) }),
  ]),
});

export const documentInputSchema = z.strictObject({
  type: z.literal("document"),
  source: base64Source(DOCUMENT_MEDIA_TYPES),
  title: z.string().max(MAX_DOCUMENT_TITLE_CHARS).optional(),
});

export type ImageInput = z.infer<typeof imageInputSchema>;
export type DocumentInput = z.infer<typeof documentInputSchema>;
/** A block of a user message as sent: text, an image, a document. */
export type UserInputBlock = TextBlock | ImageInput | DocumentInput;
