import type { ClientTool } from "../../store/schema.js";
import type { FinishOptions } from "../../core/run-settings.js";
import type { ToolChoice } from "../../core/model-provider.js";
import type { CreateResponseBody } from "./create-response-body.js";
import type { FunctionTool, ResponseEcho } from "./present-response.js";

/** What a request asked for, as its response shows it: OpenAI's defaults where it said nothing. */
export function echoOf(body: CreateResponseBody, conversationId: string | null): ResponseEcho {
  const format = body.text?.format;
  return {
    model: body.model,
    instructions: body.instructions ?? null,
    tools: (body.tools ?? []).map((t): FunctionTool => ({
      type: "function",
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? null,
    })),
    tool_choice: body.tool_choice ?? "auto",
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    presence_penalty: body.presence_penalty ?? 0,
    frequency_penalty: body.frequency_penalty ?? 0,
    top_logprobs: body.top_logprobs ?? 0,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    // The spec's `JsonSchemaResponseFormat` shows `schema` as null.
    text: {
      format:
        format?.type === "json_schema"
          ? {
              type: "json_schema",
              name: format.name,
              description: format.description ?? null,
              schema: null,
              strict: format.strict ?? false,
            }
          : (format ?? { type: "text" }),
    },
    truncation: body.truncation ?? "disabled",
    metadata: body.metadata ?? {},
    store: body.store ?? true,
    service_tier: body.service_tier ?? "default",
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    conversation: conversationId === null ? null : { id: conversationId },
  };
}

/** The request's function tools as loopd's client tools: the model sees them, the client runs them. */
export const clientToolsOf = (body: CreateResponseBody): ClientTool[] =>
  (body.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description ?? "",
    input_schema: t.parameters ?? { type: "object", properties: {} },
  }));

export const toolChoiceOf = (choice: CreateResponseBody["tool_choice"]): ToolChoice | undefined =>
  choice == null ? undefined : typeof choice === "string" ? choice : { name: choice.name };

/** `text.format` as the run's `finish`: a JSON Schema's answer is the finish call's checked result. */
export function finishOf(body: CreateResponseBody): FinishOptions | null | undefined {
  const format = body.text?.format;
  if (format?.type === "json_schema") return { result_schema: format.schema };
  if (format?.type === "json_object") return { result_schema: { type: "object" } };
  return format?.type === "text" ? null : undefined;
}
