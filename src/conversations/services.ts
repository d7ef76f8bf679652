import type { ModelProvider, ProviderName } from "../agent/model.js";
import type { Config } from "../config.js";
import type { Broadcast } from "../store/broadcast.js";
import type { Store } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { RunSignals } from "./run-signals.js";

/** The few log calls the use cases make; pino's logger fits it. */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Everything the use cases need, passed in (no module-level singletons). */
export interface Services {
  config: Config;
  store: Store;
  providers: Record<ProviderName, ModelProvider>;
  registry: ToolRegistry;
  signals: RunSignals;
  /** Nudges the other loopd processes on the same database. */
  broadcast: Broadcast;
  /** This process, as the owner of the run leases it holds. */
  instanceId: string;
  log: Log;
}
