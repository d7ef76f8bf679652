import { Counter, Gauge, type Registry } from "prom-client";
import type { AgentEvent } from "../core/agent-events.js";

/** A called model's circuit in this process (the cooldown). */
export interface ModelState {
  provider: string;
  model: string;
  state: "ok" | "cooling_down" | "probing";
}

/** Provider error types are few, but a compatible server may send anything: kept short and plain. */
const reasonLabel = (reason: string) => (/^[a-z0-9_]{1,40}$/i.test(reason) ? reason : "other");

/** How model calls ride out failures: retries and fallbacks, counted from the loop's events, and each model's circuit. */
export function createModelMetrics({
  registers,
  modelLabel,
  modelStates,
}: {
  registers: Registry[];
  modelLabel: (model: string) => string;
  modelStates: () => ModelState[];
}) {
  watchModelStates(registers, modelStates);
  const retries = new Counter({
    name: "loopd_model_retries_total",
    help: "Model calls made again after a failure, by provider, model and reason (the provider's error type, or the status)",
    labelNames: ["provider", "model", "reason"],
    registers,
  });
  const fallbacks = new Counter({
    name: "loopd_model_fallbacks_total",
    help: "Steps that went on with the next model of their chain, by the model left (provider/model), the one taken and why",
    labelNames: ["from", "to", "reason"],
    registers,
  });
  return {
    /** Counts a retry or a fallback; any other event is not theirs. */
    onEvent(e: AgentEvent) {
      if (e.type === "model.retry") {
        const reason = reasonLabel(e.reason.type ?? String(e.reason.status ?? "no_response"));
        return retries.inc({ provider: e.provider, model: modelLabel(e.model), reason });
      }
      if (e.type !== "model.fallback") return;
      const from = modelLabel(`${e.from.provider}/${e.from.model}`);
      fallbacks.inc({ from, to: modelLabel(`${e.to.provider}/${e.to.model}`), reason: e.reason.code });
    },
  };
}

/** The state of each called model's circuit, read at each scrape. */
function watchModelStates(registers: Registry[], states: () => ModelState[]): void {
  new Gauge({
    name: "loopd_model_cooldown_state",
    help: "Each called model's circuit in this process: 0 ok, 1 cooling down (skipped), 2 probing",
    labelNames: ["provider", "model"],
    registers,
    collect() {
      this.reset();
      for (const { provider, model, state } of states())
        this.set({ provider, model }, state === "ok" ? 0 : state === "cooling_down" ? 1 : 2);
    },
  });
}
