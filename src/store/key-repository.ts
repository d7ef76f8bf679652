import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { apiKeys, type ApiKeyRow } from "./schema.js";

/** A tenant's name: what keys and conversations are grouped by. */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a key looks like: `lpd_` and 43 characters of base64url (256 random bits). */
export const KEY_PREFIX = "lpd_";

/** How a key is kept: the hex SHA-256 of the whole key. */
export const hashOfKey = (key: string) => createHash("sha256").update(key).digest("hex");

/** A key as it is listed: everything but the key, which is never kept. */
export type ApiKeyInfo = Omit<ApiKeyRow, "keyHash">;

const info = ({ keyHash: _hash, ...rest }: ApiKeyRow): ApiKeyInfo => rest;

/** API keys: made (shown once), listed, revoked; looked up by the hash of what a request presents. */
export function createKeyRepository({ db }: { db: Db }) {
  return {
    async create({ tenant, name }: { tenant: string; name: string | null }): Promise<{ key: string; row: ApiKeyInfo }> {
      const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
      const [row] = await db
        .insert(apiKeys)
        .values({ id: newId("key"), tenantId: tenant, name, keyHash: hashOfKey(key) })
        .returning();
      return { key, row: info(row!) };
    },

    /** Newest first; a tenant's, or every tenant's. */
    async list({ tenant }: { tenant?: string | undefined } = {}): Promise<ApiKeyInfo[]> {
      const rows = await db
        .select()
        .from(apiKeys)
        .where(tenant === undefined ? undefined : eq(apiKeys.tenantId, tenant))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
      return rows.map(info);
    },

    /** The key, revoked now (or when it was); undefined for an unknown id. */
    async revoke(id: string): Promise<ApiKeyInfo | undefined> {
      await db
        .update(apiKeys)
        .set({ revokedAt: sql`now()` })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
      return row && info(row);
    },

    /** The live key with this hash: its id and tenant. */
    async findLive(keyHash: string): Promise<{ id: string; tenantId: string } | undefined> {
      const [row] = await db
        .select({ id: apiKeys.id, tenantId: apiKeys.tenantId })
        .from(apiKeys)
        .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)));
      return row;
    },

    /** Whether any key was ever made (revoked ones count). */
    async any(): Promise<boolean> {
      const [row] = await db.select({ id: apiKeys.id }).from(apiKeys).limit(1);
      return row !== undefined;
    },

    /** Marks keys as used now: one statement for every key seen since the last time. */
    async touch(ids: readonly string[]): Promise<void> {
      if (ids.length > 0)
        await db
          .update(apiKeys)
          .set({ lastUsedAt: sql`now()` })
          .where(inArray(apiKeys.id, [...ids]));
    },
  };
}
