import type { Log, Services } from "../../services.js";
import { DEFAULT_TENANT } from "./request-tenant.js";
import { hashOfKey, KEY_PREFIX } from "../../store/key-repository.js";
import type { Store } from "../../store/store.js";

/** Whose a presented key is. */
export interface KeyOwner {
  keyId: string;
  tenant: string;
}

export interface KeyCheck {
  /** The live key's owner; null for a key that is unknown or revoked. */
  ownerOf(key: string): Promise<KeyOwner | null>;
  /** Forgets every answer remembered: a key was just revoked on this instance, and is refused from the next request on. */
  forget(): void;
  /** Writes the last uses not written yet. */
  close(): Promise<void>;
}

/**
 * Looks a presented key up by its SHA-256 (an index lookup: nothing about
 * the key leaks through timing but its hash's), remembering the answer for
 * `ttlMs` (so a revoke takes effect within that on every instance; at once
 * on the instance that revoked it, which calls `forget`) and asking the database once for a key many requests present at once. Keys
 * seen are marked used in one statement every `touchEveryMs`, not one write
 * per request.
 */
export function createKeyCheck(
  store: Pick<Store, "keys">,
  {
    log,
    ttlMs = 1_000,
    maxEntries = 10_000,
    touchEveryMs = 60_000,
  }: { log: Log; ttlMs?: number; maxEntries?: number; touchEveryMs?: number },
): KeyCheck {
  const cache = new Map<string, { owner: Promise<KeyOwner | null>; until: number }>();
  const used = new Set<string>();
  const touch = async () => {
    const ids = [...used];
    used.clear();
    await store.keys
      .touch(ids)
      .catch((err: unknown) => log.warn({ err }, "could not record when API keys were last used"));
  };
  const timer = setInterval(() => void touch(), touchEveryMs);
  timer.unref();

  return {
    async ownerOf(key) {
      // Not one of ours: no need to ask the database (nor to fill the cache with junk).
      if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
      const hash = hashOfKey(key);
      const now = Date.now();
      let entry = cache.get(hash);
      if (!entry || entry.until <= now) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        const owner = store.keys.findLive(hash).then((row) => (row ? { keyId: row.id, tenant: row.tenantId } : null));
        entry = { owner, until: now + ttlMs };
        cache.set(hash, entry);
        // A failed lookup is not remembered: the next request asks again.
        owner.catch(() => cache.get(hash) === entry && cache.delete(hash));
      }
      const owner = await entry.owner;
      if (owner) used.add(owner.keyId);
      return owner;
    },
    // Everything, not only the revoked key's entry: a lookup of it still in flight may have begun before the revoke.
    // Revokes are rare, and each entry dropped costs one indexed query to fill again.
    forget: () => cache.clear(),
    async close() {
      clearInterval(timer);
      await touch();
    },
  };
}

/**
 * Keys are on and none was ever made (a container's first start): one is
 * made for the tenant `default` and printed this once, so the service is
 * usable without being open. More come from `npm run keys` or the admin routes.
 */
export async function makeFirstKey(
  store: Services["store"],
  logger: Pick<Log, "warn" | "isLevelEnabled">,
): Promise<void> {
  if (await store.keys.any()) return;
  const { key, row } = await store.keys.create({ tenant: DEFAULT_TENANT, name: "first start" });
  const said = `API keys are required and none existed, so one was made for tenant ${row.tenantId}; it is shown this once, keep it: ${key}`;
  // Shown whatever the log level: a key nobody saw would leave the operator locked out.
  if (logger.isLevelEnabled("warn")) logger.warn({ key_id: row.id, tenant: row.tenantId }, said);
  else process.stderr.write(`loopd: ${said}\n`);
}
