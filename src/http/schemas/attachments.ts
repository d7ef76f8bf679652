import { conversationParams } from "./conversations.js";
import { id } from "./shared.js";

/** Attachments, as zod: an attachment's path. */

export const attachmentParams = conversationParams.extend({
  attachment_id: id().describe("The attachment's id (`att_…`)"),
});
