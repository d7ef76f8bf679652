import type { ModelFailure } from "../core/agent-events.js";
import type { ProviderError } from "../core/model-provider.js";
import type { ModelProvider } from "../core/model-provider.js";
import type { RunError } from "../core/run-outcome.js";
import type { ModelCooldown, ModelKey } from "./model-cooldown.js";

/** The models of a step's chain tried so far (by place in the chain): attempts made and the last error (null: skipped, cooling down). */
/** A model of a run's chain: the run's own, then its fallbacks. */
export interface ModelChoice {
  provider: ModelProvider;
  model: string;
}

export type Tried = Map<number, { attempts: number; error: ProviderError | null }>;

/** The first model from `from` on that is not cooling down; when all are, the one whose cooldown ends first, probed now; null when none is left. */
export function nextModel({
  from,
  keys,
  cooldown,
  tried,
}: {
  from: number;
  keys: ModelKey[];
  cooldown: ModelCooldown;
  tried: Tried;
}): number | null {
  let soonest: { at: number; until: number } | null = null;
  for (let at = from; at < keys.length; at++) {
    const admitted = cooldown.admit(keys[at]!);
    if (admitted.type === "call") return at;
    if (!tried.has(at)) tried.set(at, { attempts: 0, error: null });
    if (soonest === null || admitted.until < soonest.until) soonest = { at, until: admitted.until };
  }
  if (soonest === null) return null;
  cooldown.probe(keys[soonest.at]!);
  return soonest.at;
}

/** A failure as events show it: the provider's status, word and message. */
export const failureOf = (error: ProviderError): ModelFailure => ({
  status: error.status,
  type: error.type ?? (error.status === null ? "no_response" : null),
  message: error.message,
});

/** Every model of the chain is down: each named with its last error (credentials are redacted where the run's end is written). */
export function unavailable(chain: ModelChoice[], tried: Tried): RunError {
  const parts = [...tried.entries()]
    .sort(([a], [b]) => a - b)
    .map(([at, { attempts, error }]) => {
      const name = `${chain[at]!.provider.name}/${chain[at]!.model}`;
      if (error === null) return `${name}: cooling down after repeated failures`;
      const status = error.status === null ? "no response" : String(error.status);
      return `${name}: ${status}${error.type ? ` ${error.type}` : ""}: ${error.message} (${attempts} attempt${attempts === 1 ? "" : "s"})`;
    });
  const message = `no model could answer: ${parts.join("; ")}`;
  return { code: "provider_unavailable", message };
}
