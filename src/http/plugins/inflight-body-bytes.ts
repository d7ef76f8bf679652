/** One request body's share of the bytes in flight: grown as its bytes arrive, released once (again is a no-op). */
export interface BodyReservation {
  /** Takes `bytes` more; or, taking nothing, says which bound that would pass. */
  grow(bytes: number): InflightRefusal | null;
  release(): void;
}

/** Why a body was refused: its key's share, or the bound of all. */
export type InflightRefusal = { refused: "key" | "all"; limit: number };

export interface InflightBodyBytes {
  /** A reservation of `bytes` for a body of `key`'s, or why not. */
  reserve(key: string, bytes: number): BodyReservation | InflightRefusal;
  /** Bytes held now, in all. */
  readonly total: number;
  /** Bytes held now by `key`. */
  of(key: string): number;
}

/**
 * Counts the bytes of request bodies being received, in all and by key, so
 * that slow uploads cannot pin the process's memory: a body is let in while
 * its bytes fit both bounds. A bound only holds a body back for the others
 * it shares that bound with: a key's only body may pass the key's share, the
 * process's only body the bound of all (each is within its route's own
 * limit), so a bound below the largest body a route takes never refuses it
 * for good.
 */
export function createInflightBodyBytes({
  total: maxTotal,
  perKey,
}: {
  total: number;
  perKey: number;
}): InflightBodyBytes {
  let total = 0;
  const byKey = new Map<string, number>();
  const held = (key: string) => byKey.get(key) ?? 0;
  /** Whether `bytes` more for a body that holds `own` already would pass a bound that others share with it. */
  const refusal = (key: string, bytes: number, own: number): InflightRefusal | null => {
    const mine = held(key);
    if (mine > own && mine + bytes > perKey) return { refused: "key", limit: perKey };
    if (total > own && total + bytes > maxTotal) return { refused: "all", limit: maxTotal };
    return null;
  };
  const take = (key: string, bytes: number) => {
    total += bytes;
    const mine = held(key) + bytes;
    if (mine === 0) byKey.delete(key);
    else byKey.set(key, mine);
  };
  return {
    get total() {
      return total;
    },
    of: held,
    reserve(key, bytes) {
      const refused = refusal(key, bytes, 0);
      if (refused) return refused;
      let mine = bytes;
      take(key, bytes);
      let released = false;
      return {
        grow(more) {
          if (released) return null;
          const refused = refusal(key, more, mine);
          if (refused) return refused;
          take(key, more);
          mine += more;
          return null;
        },
        release() {
          if (released) return;
          released = true;
          take(key, -mine);
        },
      };
    },
  };
}
