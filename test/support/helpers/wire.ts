import type { RecordedRequest } from "../fake-llm/server.js";

export interface WireToolResult {
  id: string;
  content: string;
  isError: boolean;
}

/** Every tool result a recorded model request carried, in order, whichever the API. */
export function toolResultsIn(req: RecordedRequest): WireToolResult[] {
  const messages = req.body.messages as any[];
  if (req.api === "anthropic") {
    return messages
      .filter((m) => m.role === "user" && Array.isArray(m.content))
      .flatMap((m) => m.content.filter((b: any) => b.type === "tool_result"))
      .map((b: any) => ({
        id: b.tool_use_id,
        content: typeof b.content === "string" ? b.content : b.content.map((c: any) => c.text).join(""),
        isError: b.is_error === true,
      }));
  }
  return messages
    .filter((m) => m.role === "tool")
    .map((m) => ({ id: m.tool_call_id, content: m.content, isError: String(m.content).startsWith("Error") }));
}

/** Every tool call id the assistant messages of a recorded request carried. */
export function toolCallIdsIn(req: RecordedRequest): string[] {
  const messages = req.body.messages as any[];
  if (req.api === "anthropic") {
    return messages
      .filter((m) => m.role === "assistant" && Array.isArray(m.content))
      .flatMap((m) => m.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id));
  }
  return messages
    .filter((m) => m.role === "assistant" && m.tool_calls)
    .flatMap((m) => m.tool_calls.map((c: any) => c.id));
}

/** The text of every user message of a recorded request, in order. */
export function userTextsIn(req: RecordedRequest): string[] {
  const messages = req.body.messages as any[];
  return messages
    .filter((m) => m.role === "user")
    .flatMap((m) =>
      typeof m.content === "string"
        ? [m.content]
        : m.content.filter((b: any) => b.type === "text").map((b: any) => b.text),
    );
}

/** The system prompt of a recorded request ("" without one), whichever the API. */
export function systemIn(req: RecordedRequest): string {
  if (req.api === "anthropic") {
    const system = req.body.system as string | { text: string }[] | undefined;
    return typeof system === "string" ? system : (system ?? []).map((b) => b.text).join("");
  }
  const first = (req.body.messages as any[]).find((m) => m.role === "system" || m.role === "developer");
  return typeof first?.content === "string" ? first.content : JSON.stringify(first?.content ?? "");
}
