import type { RunUsage } from "../../core/usage.js";
import type { OutputItem } from "../items/openai-items.js";

/** A function tool as the response shows it (the spec's `FunctionTool`). */
export interface FunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

type TextFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description: string | null; schema: null; strict: boolean };

/** What a request asked for, as its response echoes it (kept with the response). */
export interface ResponseEcho {
  model: string;
  instructions: string | null;
  tools: FunctionTool[];
  tool_choice: "none" | "auto" | "required" | { type: "function"; name: string };
  parallel_tool_calls: boolean;
  temperature: number;
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  text: { format: TextFormat };
  truncation: "auto" | "disabled";
  metadata: Record<string, string>;
  store: boolean;
  service_tier: string;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  /** Named by the request (`conversation`): echoed as `{id}`. */
  conversation: { id: string } | null;
}

/** A run as far as a response tells it (`presentRun`'s fields). */
export interface RunView {
  status: string;
  stop_reason: string | null;
  error: { code: string; message: string } | null;
  usage: RunUsage;
}

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

/** A run's status as a response's: a pause for the client (its function calls, an approval) ends the response `completed`. */
export function responseStatusOf(run: Pick<RunView, "status">): ResponseStatus {
  switch (run.status) {
    case "queued":
      return "queued";
    case "running":
    case "waiting":
      return "in_progress";
    case "requires_action":
    case "completed":
      return "completed";
    case "incomplete":
      return "incomplete";
    case "cancelled":
      return "cancelled";
    default:
      return "failed";
  }
}

/** Why a response is incomplete, in OpenAI's words where it has them. */
const incompleteReason = (stopReason: string | null) =>
  stopReason === "max_tokens" ? "max_output_tokens" : (stopReason ?? "incomplete");

export const unixSeconds = (at: Date | string) => Math.floor(new Date(at).getTime() / 1000);

/**
 * The spec's `ResponseResource`: every required field, sampling numbers as
 * numbers, times in Unix seconds; the run decides the status, usage and
 * error, the output is the items of the response's stretch of the run.
 */
export function presentResponse({
  id,
  createdAt,
  completedAt,
  echo,
  previousResponseId,
  background,
  run,
  output,
}: {
  id: string;
  createdAt: Date;
  /** When the response's stretch of the run ended (its end or its pause); null while it goes on. */
  completedAt: Date | string | null;
  echo: ResponseEcho;
  previousResponseId: string | null;
  background: boolean;
  run: RunView;
  output: OutputItem[];
}) {
  const status = responseStatusOf(run);
  const over = status !== "queued" && status !== "in_progress";
  const { conversation, ...asked } = echo;
  return {
    id,
    object: "response" as const,
    created_at: unixSeconds(createdAt),
    completed_at: status === "completed" && completedAt !== null ? unixSeconds(completedAt) : null,
    status,
    incomplete_details: status === "incomplete" ? { reason: incompleteReason(run.stop_reason) } : null,
    previous_response_id: previousResponseId,
    output,
    error:
      status === "failed"
        ? { code: run.error?.code ?? "server_error", message: run.error?.message ?? "the response failed" }
        : null,
    reasoning: null,
    usage: over ? usageOf(run.usage) : null,
    background,
    ...asked,
    ...(conversation && { conversation }),
  };
}

export type ResponseResource = ReturnType<typeof presentResponse>;

export function usageOf(usage: RunUsage) {
  const input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
  return {
    input_tokens: input,
    output_tokens: usage.output_tokens,
    total_tokens: input + usage.output_tokens,
    input_tokens_details: { cached_tokens: usage.cache_read_tokens },
    output_tokens_details: { reasoning_tokens: 0 },
  };
}
