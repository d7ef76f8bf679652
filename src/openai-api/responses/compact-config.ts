import { z } from "zod";
import { blank } from "../../util/env-values.js";

/** What a key is decoded from: 64 hex digits, or base64 of 32 bytes (`openssl rand -base64 32`). */
export function compactKeyBytes(text: string): Buffer | null {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? Buffer.from(t, "base64")
      : null;
  return bytes?.length === 32 ? bytes : null;
}

/** The variables of `/v1/responses/compact` (composed into config.ts's). */
export const compactVariables = {
  /**
   * The AES-256 key that seals a compaction's `encrypted_content`: 32 random
   * bytes as 64 hex digits or base64. Unset: one loopd makes once and keeps
   * in the database, shared by every instance on it.
   */
  RESPONSES_COMPACT_KEY: z.preprocess(
    (v) => (blank(v) ? undefined : v),
    z
      .string()
      .refine(
        (s) => compactKeyBytes(s) !== null,
        "must be 32 random bytes as 64 hex digits or base64 (openssl rand -base64 32)",
      )
      .optional(),
  ),
};

export function compactSettingsOf(e: { RESPONSES_COMPACT_KEY?: string | undefined }) {
  return {
    /** The operator's key as written (decoded where it is used); null: loopd's own, kept in the database. */
    compactKey: e.RESPONSES_COMPACT_KEY?.trim() ?? null,
  };
}
