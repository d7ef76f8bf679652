import { buildContext } from "../../agent/build-context.js";
import type { AttachmentData, NewMessage } from "../../core/messages.js";
import type { ModelProvider, ModelRequestBody } from "../../core/model-provider.js";
import type { ModelCallRecord, ModelSetup } from "./run-tracer.js";

/**
 * A recorded model call's request, made again from its record and the
 * stored history (`history[i]` has seq i + 1; at least `history_length`
 * messages, refused turns of earlier runs marked `excluded`) and the bytes
 * of the attachments it refers to: the context builder and the request
 * builders are pure, so this is what the call sent.
 */
export function rebuildRequest({
  record,
  setup,
  history,
  attachments,
}: {
  record: ModelCallRecord;
  setup: ModelSetup;
  history: readonly NewMessage[];
  /** Without them, each attachment is sent as a note that it was not loaded (and the body is not the one sent). */
  attachments?: AttachmentData;
}): ModelRequestBody {
  const built = buildContext({
    history: history.slice(0, record.history_length),
    settings: setup.context,
    fixedTokens: setup.fixed_tokens,
    tokenRatio: record.token_ratio,
  });
  return {
    model: setup.model,
    system: setup.system,
    messages: built.messages,
    tools: setup.tools,
    toolChoice: record.tool_choice,
    maxTokens: record.max_tokens ?? setup.max_tokens,
    cacheKey: setup.cache_key,
    ...(attachments && { attachments }),
  };
}

/** The body the provider's SDK was handed, built again (see `rebuildRequest`). */
export const rebuildBody = (provider: ModelProvider, request: ModelRequestBody): object =>
  provider.buildRequest(request);
