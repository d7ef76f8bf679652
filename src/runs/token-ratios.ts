/**
 * Per conversation, the factor that turns loopd's token estimates into its
 * provider's count, as learnt from its last model call here (see
 * `calibrateTokens`): the next run, and `GET …/context`, start from it.
 * Kept in memory, the most recently used `max` conversations; a conversation
 * unknown here starts at 1.
 */
export function createTokenRatios({ max = 10_000 }: { max?: number } = {}) {
  const ratios = new Map<string, number>();
  return {
    get: (conversationId: string): number => ratios.get(conversationId) ?? 1,
    set(conversationId: string, ratio: number): void {
      ratios.delete(conversationId);
      ratios.set(conversationId, ratio);
      if (ratios.size > max) ratios.delete(ratios.keys().next().value!);
    },
  };
}

export type TokenRatios = ReturnType<typeof createTokenRatios>;
