import type { Message } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";

export interface Approval {
  approve: boolean;
  reason?: string | undefined;
}

/** A caller's message: its text (data parts written out as JSON), and the approval it gives, if it is one. */
export interface ReadMessage {
  text: string;
  approval: Approval | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A data part `{"approve": true|false, "reason"?}`, or a text that is only "approve" or "deny". */
function approvalIn(message: Message, text: string): Approval | null {
  for (const part of message.parts) {
    const value = part.content?.$case === "data" ? (part.content.value as unknown) : undefined;
    if (isRecord(value) && typeof value.approve === "boolean") {
      const reason = typeof value.reason === "string" && value.reason !== "" ? value.reason : undefined;
      return { approve: value.approve, ...(reason !== undefined && { reason }) };
    }
  }
  const word = text.trim().toLowerCase();
  return word === "approve" ? { approve: true } : word === "deny" ? { approve: false } : null;
}

/** The text of an A2A message for the agent; a file part is refused (loopd's agents take text and JSON here). */
export function readA2AMessage(message: Message | undefined): ReadMessage {
  if (!message || message.parts.length === 0)
    throw new RequestMalformedError("params.message must have at least one part (a text or a data part)");
  const texts = message.parts.map((part, i) => {
    switch (part.content?.$case) {
      case "text":
        return part.content.value;
      case "data":
        return JSON.stringify(part.content.value);
      case "raw":
      case "url":
        throw new ContentTypeNotSupportedError(
          `params.message.parts[${i}] is a file: loopd's agents take text and data parts over A2A`,
        );
      default:
        throw new RequestMalformedError(`params.message.parts[${i}] has no text, data, raw or url`);
    }
  });
  const text = texts.join("\n");
  if (text.trim() === "") throw new RequestMalformedError("params.message has no text");
  return { text, approval: approvalIn(message, text) };
}
