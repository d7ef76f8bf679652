/** What a run is given to keep to, settled when it is created (a conversation's defaults, then the request's). */

/** The limits a run may not pass. Null: no limit. */
export interface RunBudget {
  /** Model calls, the grace call included. */
  max_steps: number;
  /** Input + output tokens, cache reads and writes included (they are billed too). */
  max_tokens: number | null;
  /** Wall time since the run began, time spent paused for the application not counted. */
  max_seconds: number | null;
  max_cost_usd: number | null;
  /** When a budget runs out while the model still wants tools: one last call, tools disabled. */
  grace_turn: boolean;
}

/** The run ends with a `finish` call (offered as a tool); `result_schema` is the JSON Schema `result` must match (as the client wrote it). */
export interface FinishOptions {
  result_schema?: Record<string, unknown> | undefined;
}

/** The name loopd's own finish tool has; no other tool may take it. */
export const FINISH_TOOL = "finish";
