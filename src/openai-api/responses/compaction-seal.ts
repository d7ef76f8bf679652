import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** What a compaction carries, sealed: loopd's summary of what it compacted. */
export interface CompactionPayload {
  summary: string;
  /** Unix seconds. */
  created_at: number;
}

/** The prefix of every `encrypted_content` loopd writes, and its version. */
const PREFIX = "loopd.cmp.v1.";
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Which key sealed it: the first bytes of the key's SHA-256, so a blob of another key is told apart from a forged one. */
const KEY_ID_BYTES = 4;

const keyIdOf = (key: Buffer) => createHash("sha256").update(key).digest().subarray(0, KEY_ID_BYTES);
/** The tenant is bound to the blob as associated data: another tenant's blob does not open. */
const aadOf = (tenant: string) => Buffer.from(`loopd compaction\0${tenant}`, "utf8");

/**
 * Seals a compaction with AES-256-GCM: `loopd.cmp.v1.` + base64url of key
 * id ‖ IV ‖ ciphertext ‖ tag. Opaque to the client; authenticated, so a
 * changed byte, a cut or a foreign tenant fails to open.
 */
export function sealCompaction(key: Buffer, tenant: string, payload: CompactionPayload): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aadOf(tenant));
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([keyIdOf(key), iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** Why a blob did not open, in words a client can act on. */
export class CompactionRefused extends Error {
  override readonly name = "CompactionRefused";
}

/** The payload of a blob `sealCompaction` wrote with this key for this tenant; anything else throws `CompactionRefused`. */
export function openCompaction(key: Buffer, tenant: string, blob: string): CompactionPayload {
  if (!blob.startsWith(PREFIX)) throw new CompactionRefused("is not a compaction loopd wrote");
  const rest = blob.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(rest)) throw new CompactionRefused("is not a compaction loopd wrote (not base64url)");
  const bytes = Buffer.from(rest, "base64url");
  if (bytes.length < KEY_ID_BYTES + IV_BYTES + TAG_BYTES + 2)
    throw new CompactionRefused("is cut short: send it back whole, as it was given");
  if (!bytes.subarray(0, KEY_ID_BYTES).equals(keyIdOf(key)))
    throw new CompactionRefused("was sealed with a key this server no longer has (RESPONSES_COMPACT_KEY changed?)");
  const iv = bytes.subarray(KEY_ID_BYTES, KEY_ID_BYTES + IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(aadOf(tenant));
  decipher.setAuthTag(tag);
  let text: string;
  try {
    const body = bytes.subarray(KEY_ID_BYTES + IV_BYTES, bytes.length - TAG_BYTES);
    text = Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    throw new CompactionRefused("does not open: it was changed, cut, or made for another API key's tenant");
  }
  const payload = JSON.parse(text) as CompactionPayload;
  if (typeof payload.summary !== "string") throw new CompactionRefused("holds no summary");
  return payload;
}
