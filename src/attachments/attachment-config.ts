import type { z } from "zod";
import { intFromEnv } from "../util/env-values.js";

/** The variables of images and documents in messages (composed into config.ts's). */
export const attachmentVariables = {
  MAX_ATTACHMENT_BYTES: intFromEnv(5_242_880, { max: 104_857_600 }),
  MAX_ATTACHMENTS_PER_MESSAGE: intFromEnv(10, { max: 100 }),
};

export function attachmentSettingsOf(e: z.output<z.ZodObject<typeof attachmentVariables>>) {
  return {
    /** The most bytes one image or document may have. */
    maxBytes: e.MAX_ATTACHMENT_BYTES,
    /** The most images and documents one message may hold. */
    maxCount: e.MAX_ATTACHMENTS_PER_MESSAGE,
  };
}
