import type { UserInputBlock } from "../core/attachment-input.js";
import { AppError } from "../errors.js";

/**
 * A message's text, every text block together (or its string), is at most
 * `maxBytes` of UTF-8 (`MAX_MESSAGE_TEXT_BYTES`): it is sent to the model
 * again on every later call of the conversation. Only images and documents
 * may use the larger body a message's route allows. Past it: `413` naming
 * `field`.
 */
export function checkMessageText(
  content: string | readonly UserInputBlock[],
  { maxBytes, field }: { maxBytes: number; field: string },
): void {
  let bytes = 0;
  for (const block of typeof content === "string" ? [{ type: "text" as const, text: content }] : content) {
    if (block.type === "text") bytes += Buffer.byteLength(block.text);
  }
  if (bytes <= maxBytes) return;
  throw new AppError(
    "payload_too_large",
    `${field}: the message's text is ${bytes} bytes, more than the ${maxBytes} a message may hold (MAX_MESSAGE_TEXT_BYTES); send a long text as a text/plain document, or split it`,
    { field, limit: maxBytes, bytes },
  );
}
