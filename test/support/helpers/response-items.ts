/**
 * Items of a conversation as a client sends them back in `/v1/responses`'
 * `input`, and what the model was sent, in one shape for both wires: for
 * the tests of a history kept by the client.
 */
import type { RecordedRequest } from "../fake-llm/server.js";

export const tools = [
  {
    type: "function" as const,
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    strict: false,
  },
];
export const user = (text: string) => ({ type: "message" as const, role: "user" as const, content: text });
export const call = (id: string) => ({
  type: "function_call" as const,
  call_id: id,
  name: "get_weather",
  arguments: '{"city":"Paris"}',
});
export const output = (id: string, text = "sunny") => ({
  type: "function_call_output" as const,
  call_id: id,
  output: text,
});

/** What the model was sent, in one shape for both wires: `role`, then its calls' or result's id, then its text. */
export function sentHistory(request: RecordedRequest): string[] {
  const { body } = request;
  if (request.api === "anthropic")
    return (body.messages as { role: string; content: string | Record<string, unknown>[] }[]).flatMap((m) =>
      typeof m.content === "string"
        ? [`${m.role}:${m.content}`]
        : m.content.flatMap((b) =>
            b.type === "text"
              ? [`${m.role}:${String(b.text)}`]
              : b.type === "tool_use"
                ? [`call:${String(b.id)}`]
                : b.type === "tool_result"
                  ? [`result:${String(b.tool_use_id)}`]
                  : [],
          ),
    );
  return (body.messages as Record<string, unknown>[]).flatMap((m) => {
    if (m.role === "system" || m.role === "developer") return [];
    if (m.role === "tool") return [`result:${String(m.tool_call_id)}`];
    const text = typeof m.content === "string" ? m.content : ((m.content as { text?: string }[] | null) ?? []);
    const said = typeof text === "string" ? text : text.map((p) => p.text ?? "").join("");
    const calls = ((m.tool_calls as { id: string }[] | undefined) ?? []).map((c) => `call:${c.id}`);
    return [...(said === "" ? [] : [`${String(m.role)}:${said}`]), ...calls];
  });
}
