import type { Config } from "../../config.js";

/**
 * The most bytes a body that sends a user message may have: what any body
 * may hold (`BODY_LIMIT_BYTES`) plus the message's attachments at their
 * limits, as base64 (`POST …/messages` and `POST /ui/chat` alike).
 */
export const messageBodyLimit = ({ server, attachments }: Pick<Config, "server" | "attachments">): number =>
  server.bodyLimitBytes + Math.ceil(attachments.maxBytes / 3) * 4 * attachments.maxCount;
