import { eq } from "drizzle-orm";
import type { Db } from "./db.js";
import { serverKeys } from "./schema.js";

/** Keys loopd made for itself (see `serverKeys`). */
export function createServerKeyRepository({ db }: { db: Db }) {
  return {
    /**
     * The key stored under `name`; when there is none yet, `candidate` is
     * stored and returned. Two processes asking at once get the same key:
     * the second insert finds the name taken and reads the first one's.
     */
    async getOrCreate(name: string, candidate: Buffer): Promise<Buffer> {
      await db.insert(serverKeys).values({ name, key: candidate }).onConflictDoNothing();
      const [row] = await db.select({ key: serverKeys.key }).from(serverKeys).where(eq(serverKeys.name, name));
      return row!.key;
    },
  };
}

export type ServerKeyRepository = ReturnType<typeof createServerKeyRepository>;
