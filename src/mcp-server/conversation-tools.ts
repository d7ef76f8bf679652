import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ConversationService } from "../conversations/conversation-service.js";

const MESSAGES_PAGE = 100;

const listArguments = z.strictObject({
  limit: z.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional(),
});
const getArguments = z.strictObject({
  conversation_id: z.string().min(1).max(200),
  after_seq: z.number().int().min(0).default(0),
});

export const conversationTools: Tool[] = [
  {
    name: "list_conversations",
    description:
      "Lists your loopd conversations, newest first, as JSON ({data, next_cursor}); pass next_cursor as cursor for the next page.",
    inputSchema: {
      type: "object",
      properties: {
        limit: { type: "integer", minimum: 1, maximum: 100, description: "How many (default 20)" },
        cursor: { type: "string", description: "next_cursor of the page before" },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "get_conversation",
    description:
      "A loopd conversation's messages as JSON ({conversation, messages, next_after_seq}), 100 at a time; conversation.active_run_id says whether a run is still going.",
    inputSchema: {
      type: "object",
      properties: {
        conversation_id: { type: "string" },
        after_seq: { type: "integer", minimum: 0, description: "Messages after this seq (default 0: from the start)" },
      },
      required: ["conversation_id"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
];

const json = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

/** Answers a call of a conversation tool; undefined when `name` is not one. */
export async function callConversationTool(
  conversations: ConversationService,
  { tenant, name, args }: { tenant: string; name: string; args: unknown },
): Promise<CallToolResult | undefined> {
  if (name === "list_conversations") {
    const { limit, cursor } = listArguments.parse(args ?? {});
    return json(await conversations.list(tenant, { limit, cursor }));
  }
  if (name === "get_conversation") {
    const { conversation_id: id, after_seq } = getArguments.parse(args ?? {});
    const conversation = await conversations.get(tenant, id);
    const page = await conversations.messages({ tenant, id, afterSeq: after_seq, limit: MESSAGES_PAGE });
    return json({
      conversation: {
        id: conversation.id,
        title: conversation.title,
        agent: conversation.agent,
        active_run_id: conversation.active_run_id,
      },
      messages: page.data,
      next_after_seq: page.next_after_seq,
    });
  }
  return undefined;
}
