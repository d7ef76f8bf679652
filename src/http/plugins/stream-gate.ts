import { AppError } from "../../errors.js";

/**
 * Bounds the SSE streams one process holds open, in all and per tenant.
 * Each costs a socket, a follower and its share of the database pool; past
 * the bound a client gets a 503 with Retry-After (and can try another
 * instance) instead of a server that slows down for everyone. Past its own
 * share (`maxPerTenant`) a tenant gets `429 too_many_streams`, so that one
 * tenant holding many streams leaves room for the others. Both are counted
 * from the stream's opening to its end: the bound in this process, the
 * tenant's share on every instance (`elsewhere`: what the others published,
 * see `createStreamShare`; `onChange` tells it when this process's change).
 */
export function createStreamGate({
  max,
  maxPerTenant,
  elsewhere = () => 0,
  onChange = () => {},
}: {
  max: number;
  maxPerTenant: number;
  elsewhere?: (tenant: string) => number;
  /** A stream of `tenant` opened or closed here. */
  onChange?: (tenant: string) => void;
}) {
  let open = 0;
  const ofTenant = new Map<string, number>();
  return {
    get open() {
      return open;
    },
    /** The streams `tenant` holds open here. */
    openOf: (tenant: string) => ofTenant.get(tenant) ?? 0,
    /** The streams each tenant holding any holds open here. */
    byTenant: (): Map<string, number> => new Map(ofTenant),
    /** Takes a place for a stream of `tenant` (release it when the stream ends), or throws 429 at its share, 503 unavailable at the bound. */
    take(tenant: string): () => void {
      // A full server first: its 503 tells the client another instance may take the stream.
      if (open >= max) {
        throw new AppError(
          "unavailable",
          `this server already holds its maximum of ${max} open streams; try again shortly`,
          {
            max_streams: max,
          },
        );
      }
      const held = ofTenant.get(tenant) ?? 0;
      if (held + elsewhere(tenant) >= maxPerTenant) {
        throw new AppError(
          "too_many_streams",
          `this tenant already holds its share of ${maxPerTenant} open streams; close one or try again shortly`,
          {
            max_streams_per_tenant: maxPerTenant,
          },
        );
      }
      open++;
      ofTenant.set(tenant, held + 1);
      onChange(tenant);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (ofTenant.get(tenant) ?? 1) - 1;
        // A tenant with none open takes no room in the map.
        if (left === 0) ofTenant.delete(tenant);
        else ofTenant.set(tenant, left);
        onChange(tenant);
      };
    },
  };
}

export type StreamGate = ReturnType<typeof createStreamGate>;
