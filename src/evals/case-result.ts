import type { ProviderName } from "../core/model-provider.js";
import type { EvalCase } from "./eval-case.js";

/** A case and the file it was read from. */
export interface LoadedCase {
  file: string;
  evalCase: EvalCase;
}

/** A run's tokens, and what they cost (null: the model has no price). */
export interface EvalUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
}

/** One case's row of the report. */
export interface CaseResult {
  name: string;
  file: string;
  pass: boolean;
  /** What failed, one line per expectation (or why the case could not run). */
  failures: string[];
  provider: ProviderName;
  model: string | null;
  status: string | null;
  stop_reason: string | null;
  steps: number;
  usage: EvalUsage | null;
  latency_ms: number;
  tool_calls: string[];
  final_text: string | null;
}
