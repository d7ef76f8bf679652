import { forkConversation } from "../../conversations/fork-conversation.js";
import type { CreatedResponse, ResponseDeps } from "./create-response.js";

/**
 * The most `store: false` responses one WebSocket keeps; past it the oldest
 * is evicted (and a conversation no kept response needs any more is deleted).
 */
export const MAX_KEPT_RESPONSES = 32;

interface Kept {
  conversationId: string;
  /** The seq of its last message: a response continuing from it (when it is not its conversation's latest) forks here. */
  endSeq: number;
}

/**
 * WebSocket mode's connection-local cache: the `store: false` responses of
 * one socket, kept (their throw-away conversations with them) for the
 * socket's life, so that `previous_response_id` continues from them there and
 * nowhere else. A continuation from the latest response of its conversation
 * goes on in it; from an older one (or one that is to be stored), in a fork at
 * its end, as `previous_response_id` does for stored responses. A failed
 * continuation evicts what it continued from: its whole conversation, which
 * the failure may have left half-changed. Everything goes when the socket
 * closes (a `store: false` run still going is stopped with its conversation).
 * One socket's, so one tenant's; used by one response at a time.
 */
export function createKeptResponses(
  deps: ResponseDeps,
  { tenant, max = MAX_KEPT_RESPONSES }: { tenant: string; max?: number },
) {
  const { services, conversations, runs } = deps;
  /** In the order they were kept: the first is the oldest. */
  const kept = new Map<string, Kept>();
  /** Each conversation's latest kept response. */
  const latest = new Map<string, string>();
  /** The throw-away conversations this socket holds, kept or with a response still going. */
  const held = new Set<string>();
  let closed = false;

  const drop = async (conversationId: string) => {
    for (const [id, k] of kept) if (k.conversationId === conversationId) kept.delete(id);
    latest.delete(conversationId);
    if (!held.delete(conversationId)) return;
    await conversations.delete(tenant, conversationId, runs).catch(() => {
      // Already gone (a failed create deletes its own): nothing is left to drop.
    });
    services.throwaways?.release(conversationId);
  };
  const needed = (conversationId: string) => [...kept.values()].some((k) => k.conversationId === conversationId);

  return {
    /** How many responses are kept now. */
    get size() {
      return kept.size;
    },

    /**
     * The conversation a response continuing from `id` goes on in (`forked`:
     * made here), or `null` when the socket keeps no such response (it may be
     * a stored one).
     */
    async conversationOf(id: string, { store }: { store: boolean }): Promise<{ id: string; forked: boolean } | null> {
      const k = kept.get(id);
      if (!k) return null;
      if (!store && latest.get(k.conversationId) === id) return { id: k.conversationId, forked: false };
      return {
        id: (await forkConversation(services, tenant, k.conversationId, { atSeq: k.endSeq, throwaway: !store })).id,
        forked: true,
      };
    },

    /** A `store: false` response was made: its conversation is the socket's until it is dropped (at once when the socket has closed meanwhile). */
    async hold(created: CreatedResponse): Promise<void> {
      if (!created.throwaway) return;
      held.add(created.conversationId);
      if (closed) await drop(created.conversationId);
    },

    /** A `store: false` response has ended: kept, as its conversation's latest; the oldest past `max` is evicted. */
    async keep(created: CreatedResponse): Promise<void> {
      if (!created.throwaway) return;
      const endSeq = await services.store.messages.lastSeq(created.conversationId);
      kept.set(created.id, { conversationId: created.conversationId, endSeq });
      latest.set(created.conversationId, created.id);
      for (const [id, k] of kept) {
        if (kept.size <= max) break;
        kept.delete(id);
        if (latest.get(k.conversationId) === id) latest.delete(k.conversationId);
        if (!needed(k.conversationId)) await drop(k.conversationId);
      }
    },

    /** A continuation from `id` failed: `id` is evicted, with every response of its conversation. */
    async evict(id: string | null | undefined): Promise<void> {
      const k = id ? kept.get(id) : undefined;
      if (k) await drop(k.conversationId);
    },

    /** A `store: false` response that failed: its conversation (and what is kept of it) goes. */
    async discard(created: CreatedResponse): Promise<void> {
      if (created.throwaway) await drop(created.conversationId);
    },

    /** The socket closed: every conversation it held is deleted. */
    async close(): Promise<void> {
      closed = true;
      for (const conversationId of [...held]) await drop(conversationId);
    },
  };
}

export type KeptResponses = ReturnType<typeof createKeptResponses>;
