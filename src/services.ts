import type { ModelProvider, ProviderName } from "./core/model-provider.js";
import type { ModelCooldown } from "./agent/model-cooldown.js";
import type { PriceTable } from "./providers/prices/price-table.js";
import type { Config } from "./config.js";
import type { HistoryCache } from "./runs/history-cache.js";
import type { Intake } from "./runs/intake.js";
import type { OverloadMonitor } from "./runs/overload-monitor.js";
import type { RunSignals } from "./runs/run-signals.js";
import type { TokenRatios } from "./runs/token-ratios.js";
import type { Broadcast } from "./store/broadcast.js";
import type { Store } from "./store/store.js";
import type { Telemetry } from "./telemetry/telemetry.js";
import type { ThrowawayKeeper } from "./conversations/throwaway-keeper.js";
import type { TenantDailyCost } from "./conversations/tenant-daily-cost.js";
import type { ToolSet } from "./tools/tool-set.js";
import type { ToolRegistry } from "./tools/tool-registry.js";
import type { AgentCaller } from "./tools/agent-tools.js";

/** The few log calls the use cases make; pino's logger fits it. */
export interface Log {
  debug(obj: object, msg?: string): void;
  isLevelEnabled(level: string): boolean;
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
  /** The tool sets of `TOOLS_FILE`'s sources (their tools are in `registry`; `GET /tools/servers` shows their servers). */
  toolSets: ToolSet[];
  /** What a model's tokens cost (built-in list prices, or `PRICES_FILE`). */
  prices: PriceTable;
  signals: RunSignals;
  /** Histories of conversations whose runs ended here, for their next run. */
  histories: HistoryCache;
  /** Requests that start runs, taken before the next model call of the runs already going. */
  intake: Intake;
  /** Per conversation, estimated tokens → its provider's count. */
  tokenRatios: TokenRatios;
  /** This process's circuit per model and server: who is cooling down after failing (`GET /models/health`). */
  modelCooldown: ModelCooldown;
  /** Hears the nudges of the other loopd processes on the same database. */
  broadcast: Broadcast;
  /**
   * No other process can reach the database (the embedded one): every commit
   * is this process's own, so its signals reach every reader.
   */
  exclusiveDatabase: boolean;
  /** This process, as the owner of the run leases it holds. */
  instanceId: string;
  log: Log;
  /** Metrics and traces: told what runs do, never asked. */
  telemetry: Telemetry;
  /** Whether the event loop is overloaded, sustained: new runs are refused then (MAX_EVENT_LOOP_DELAY_MS). */
  overload: OverloadMonitor;
  /** `TENANT_DAILY_COST_USD`: what each tenant's runs cost today, kept briefly, and the refusal past it. */
  tenantCost: TenantDailyCost;
  /** Runs agents for other agents' calls (`agent__<name>`); set once the run manager exists (absent: no agent is offered as a tool). */
  agentCaller?: AgentCaller | undefined;
  /** Keeps the `store: false` conversations this process holds, and deletes those a process killed left behind; set with the run manager. */
  throwaways?: ThrowawayKeeper | undefined;
}
