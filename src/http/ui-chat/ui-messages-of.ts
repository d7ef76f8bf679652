import type { UIMessage } from "ai";
import { isLoopdMessage, noteOf, type Message, type UserBlock } from "../../core/messages.js";
import { reasonOfDenial } from "../../conversations/answer-action.js";
import type { RunMetadata } from "./ui-chunk-encoder.js";

export type LoopdUIMessage = UIMessage<RunMetadata>;
type Part = LoopdUIMessage["parts"][number];

/**
 * The history as the AI SDK's UI messages, to seed `useChat({ messages })`:
 * each user message as it was sent (its attachments as file parts whose url
 * is `GET /conversations/:id/attachments/:attachment_id`, relative to
 * loopd's root; a URL image by its URL), and each run's answer as one assistant
 * message whose id is the run's (the id its stream's `start` names): a step
 * per model call, its text, each call with its result (an error result as
 * `output-error`, a denial as `output-denied` with its reason), loopd's notices as `data-notice` parts. The open run's
 * answer (running or paused) is left out: `GET …/stream` brings it whole,
 * and a client seeded with it would show it twice.
 */
export function uiMessagesOf(
  history: Message[],
  { conversationId, openRunId }: { conversationId: string; openRunId: string | null },
): LoopdUIMessage[] {
  const out: LoopdUIMessage[] = [];
  let answer: LoopdUIMessage | null = null;
  const answerFor = (runId: string) => {
    if (answer?.id !== runId) {
      answer = { id: runId, role: "assistant", metadata: { run_id: runId }, parts: [] };
      out.push(answer);
    }
    return answer;
  };
  for (const message of history) {
    if (message.role === "user" && !isLoopdMessage(message)) {
      answer = null;
      out.push({ id: message.id, role: "user", parts: userParts(message.content as UserBlock[], conversationId) });
      continue;
    }
    const runId = message.run_id ?? message.id;
    if (runId === openRunId) continue;
    const parts = answerFor(runId).parts;
    if (message.role === "user") {
      parts.push({ type: "data-notice", id: message.id, data: { text: noteOf(message) } });
      continue;
    }
    if (message.role === "tool") {
      const [result] = message.content;
      const at = parts.findIndex((p) => "toolCallId" in p && p.toolCallId === result.tool_call_id);
      const call = parts[at];
      if (!call || !("input" in call)) continue;
      const base = { type: call.type, toolCallId: result.tool_call_id, input: call.input };
      const denial = result.is_error ? reasonOfDenial(result.content) : undefined;
      parts[at] = (
        denial !== undefined
          ? {
              ...base,
              state: "output-denied",
              approval: { id: result.tool_call_id, approved: false, ...(denial && { reason: denial }) },
            }
          : result.is_error
            ? { ...base, state: "output-error", errorText: result.content }
            : { ...base, state: "output-available", output: result.content }
      ) as Part;
      continue;
    }
    parts.push({ type: "step-start" });
    for (const block of message.content) {
      if (block.type === "text") {
        if (block.text !== "") parts.push({ type: "text", text: block.text, state: "done" });
      } else {
        parts.push({ type: `tool-${block.name}`, toolCallId: block.id, state: "input-available", input: block.input });
      }
    }
  }
  return out;
}

/** A user message's blocks as UI parts, in order: text blocks together as one text part (as they were always shown), each image and document a file part. */
function userParts(blocks: UserBlock[], conversationId: string): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    const last = parts.at(-1);
    if (block.type === "text") {
      if (last?.type === "text") last.text += block.text;
      else parts.push({ type: "text", text: block.text });
    } else if ("attachment_id" in block) {
      const url = `/conversations/${encodeURIComponent(conversationId)}/attachments/${encodeURIComponent(block.attachment_id)}`;
      parts.push({
        type: "file",
        mediaType: block.media_type,
        url,
        ...(block.type === "document" && block.title !== undefined && { filename: block.title }),
      });
    } else {
      parts.push({ type: "file", mediaType: mediaTypeOfUrl(block.source.url), url: block.source.url });
    }
  }
  return parts.length > 0 ? parts : [{ type: "text", text: "" }];
}

const IMAGE_EXTENSIONS: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** A URL image's media type, by its extension (it was saved with none): `image/*` when that says nothing. */
function mediaTypeOfUrl(url: string): string {
  const extension = /\.([a-z]+)$/i.exec(URL.canParse(url) ? new URL(url).pathname : "")?.[1]?.toLowerCase();
  return (extension && IMAGE_EXTENSIONS[extension]) ?? "image/*";
}
