import { randomBytes } from "node:crypto";
import type { Services } from "../../services.js";
import { compactKeyBytes } from "./compact-config.js";

/** The name loopd's own key is kept under (`server_keys`). */
export const COMPACT_KEY_NAME = "responses_compact";

/** Per store, the key once read: it never changes while loopd runs. */
const known = new WeakMap<object, Promise<Buffer>>();

/**
 * The key that seals compactions: `RESPONSES_COMPACT_KEY`, else the one
 * loopd made and keeps in the database (every instance on it reads the
 * same, and it survives restarts). Read once per process.
 */
export function compactionKey({ config, store }: Pick<Services, "config" | "store">): Promise<Buffer> {
  const given = config.openaiApi.compactKey;
  if (given !== null) return Promise.resolve(compactKeyBytes(given)!);
  let key = known.get(store);
  if (!key) {
    key = store.serverKeys.getOrCreate(COMPACT_KEY_NAME, randomBytes(32));
    // A failed read is tried again at the next request, not kept.
    key.catch(() => known.delete(store));
    known.set(store, key);
  }
  return key;
}
