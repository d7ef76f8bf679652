import { z } from "zod";

/** The most characters of one `encrypted_content` taken: a sealed summary is a few kilobytes; the spec's own bound is 10 MiB. */
export const MAX_ENCRYPTED_CONTENT = 262_144;

/** The spec's `CompactionSummaryItemParam`: a compaction sent back as input. */
export const compactionItemSchema = z.object({
  type: z.literal("compaction"),
  id: z.string().max(100).nullish(),
  encrypted_content: z.string().min(1).max(MAX_ENCRYPTED_CONTENT),
});

export type CompactionItemParam = z.infer<typeof compactionItemSchema>;
