/** Where a model is called: one circuit per provider, model and server. */
export interface ModelKey {
  provider: string;
  model: string;
  baseUrlHost: string;
}

export type CooldownState = "ok" | "cooling_down" | "probing";

/** One model as `GET /models/health` shows it. */
export interface ModelHealth {
  provider: string;
  model: string;
  base_url_host: string;
  state: CooldownState;
  consecutive_failures: number;
  last_error: { status: number | null; message: string; at: string } | null;
  until: string | null;
}

interface Circuit {
  key: ModelKey;
  state: CooldownState;
  /** The failures in a row since the last success. */
  consecutive: number;
  /** When those of the last minute were (they count towards opening); older ones are dropped, so it stays small. */
  recent: number[];
  lastError: { status: number | null; message: string; at: number } | null;
  /** Cooling down: when the probe may go; probing: when a probe that never reported is given up. */
  until: number | null;
}

export const DEFAULT_COOLDOWN_AFTER = 5;
export const DEFAULT_COOLDOWN_MS = 30_000;
/** Failures in a row open the circuit only when they fall within this window. */
const FAILURE_WINDOW_MS = 60_000;

/**
 * The models this process called and how they fare: after `after` failed
 * attempts in a row within a minute (whichever runs made them) a model is
 * skipped for `cooldownMs`; then one call probes it (`probing`): success
 * closes the circuit, failure opens it again. Per process, held in memory.
 */
export function createModelCooldown({
  after = DEFAULT_COOLDOWN_AFTER,
  cooldownMs = DEFAULT_COOLDOWN_MS,
  now = Date.now,
}: {
  /** @default 5 */
  after?: number;
  /** @default 30000 */
  cooldownMs?: number;
  now?: () => number;
} = {}) {
  const circuits = new Map<string, Circuit>();
  const circuitOf = (key: ModelKey): Circuit => {
    const id = JSON.stringify([key.provider, key.model, key.baseUrlHost]);
    let circuit = circuits.get(id);
    if (!circuit)
      circuits.set(id, (circuit = { key, state: "ok", consecutive: 0, recent: [], lastError: null, until: null }));
    return circuit;
  };
  const open = (circuit: Circuit) => {
    circuit.state = "cooling_down";
    circuit.until = now() + cooldownMs;
  };

  return {
    /** Whether a call may go to this model now (it is fine, or its cooldown is over and this call probes it), or until when it is skipped. */
    admit(key: ModelKey): { type: "call" } | { type: "skip"; until: number } {
      const circuit = circuitOf(key);
      if (circuit.state === "ok") return { type: "call" };
      if (circuit.until !== null && now() < circuit.until) return { type: "skip", until: circuit.until };
      circuit.state = "probing";
      circuit.until = now() + cooldownMs;
      return { type: "call" };
    },
    /** Probe it now, cooling down or not: every model of a chain is, and this one's cooldown ends first. */
    probe(key: ModelKey): void {
      const circuit = circuitOf(key);
      if (circuit.state !== "ok") {
        circuit.state = "probing";
        circuit.until = now() + cooldownMs;
      }
    },
    succeeded(key: ModelKey): void {
      const circuit = circuitOf(key);
      circuit.state = "ok";
      circuit.consecutive = 0;
      circuit.recent = [];
      circuit.until = null;
    },
    failed(key: ModelKey, { status, message }: { status: number | null; message: string }): void {
      const circuit = circuitOf(key);
      const at = now();
      circuit.lastError = { status, message, at };
      circuit.consecutive++;
      circuit.recent = [...circuit.recent.filter((t) => at - t <= FAILURE_WINDOW_MS), at];
      if (circuit.state === "probing") return open(circuit);
      if (circuit.state === "ok" && circuit.recent.length >= after) open(circuit);
    },
    /** The models called so far, for `GET /models/health`. */
    list(): ModelHealth[] {
      return [...circuits.values()].map(({ key, state, consecutive, lastError, until }) => ({
        provider: key.provider,
        model: key.model,
        base_url_host: key.baseUrlHost,
        state,
        consecutive_failures: consecutive,
        last_error: lastError && { ...lastError, at: new Date(lastError.at).toISOString() },
        until: state === "ok" || until === null ? null : new Date(until).toISOString(),
      }));
    },
  };
}

export type ModelCooldown = ReturnType<typeof createModelCooldown>;
