import { buildContext } from "../agent/build-context.js";
import type { NewMessage } from "../agent/messages.js";
import type { ModelProvider, ModelRequestBody, ToolChoice, ToolSpec } from "../agent/model.js";
import type { ModelCallRecord } from "./run-tracer.js";

/** A `model.setup` span's data: a run's system prompt and tools, kept once. */
export interface ModelSetup {
  system: string | null;
  tools: ToolSpec[];
}

/**
 * A recorded model call's request, made again from its record and the
 * stored history (`history[i]` has seq i + 1; at least `history_length`
 * messages, refused turns of earlier runs marked `excluded`): the context
 * builder and the request builders are pure, so this is what the call sent.
 */
export function rebuildRequest({
  record,
  setup,
  history,
}: {
  record: ModelCallRecord;
  setup: ModelSetup;
  history: readonly NewMessage[];
}): ModelRequestBody {
  const built = buildContext({
    history: history.slice(0, record.history_length),
    settings: record.context,
    fixedTokens: record.fixed_tokens,
    tokenRatio: record.token_ratio,
  });
  return {
    model: record.model,
    system: setup.system,
    messages: built.messages,
    tools: setup.tools,
    toolChoice: record.tool_choice as ToolChoice,
    maxTokens: record.max_tokens,
    cacheKey: record.cache_key,
  };
}

/** The body the provider's SDK was handed, built again (see `rebuildRequest`). */
export const rebuildBody = (provider: ModelProvider, request: ModelRequestBody): object => provider.buildRequest(request);
