import type { AgentCard } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
  type A2ARequestHandler,
} from "@a2a-js/sdk/server";

/** The methods whose answer is a stream of server-sent events, in 1.0's names and 0.3's. */
export const STREAMING_METHODS: ReadonlySet<string> = new Set([
  "SendStreamingMessage",
  "SubscribeToTask",
  "message/stream",
  "tasks/resubscribe",
]);

/** The methods that start a task (or answer a paused one): a run starts, as with `POST …/messages`. */
export const RUN_STARTING_METHODS: ReadonlySet<string> = new Set([
  "SendMessage",
  "SendStreamingMessage",
  "message/send",
  "message/stream",
]);

/** Protocol 1.0's JSON-RPC methods (0.3's are told apart by the SDK's `isLegacyJsonRpcMethod`). */
const METHODS: ReadonlySet<string> = new Set([
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
]);

/** JSON-RPC's code for a method the server does not have. */
const METHOD_NOT_FOUND = -32601;

export const methodOf = (body: unknown): string =>
  typeof body === "object" && body !== null && typeof (body as { method?: unknown }).method === "string"
    ? (body as { method: string }).method
    : "";

const idOf = (body: unknown): string | number | null => {
  const id = typeof body === "object" && body !== null ? (body as { id?: unknown }).id : null;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

/** A JSON-RPC response as the SDK's transports write one. */
export interface JsonRpcResponse {
  jsonrpc: string;
  id: string | number | null;
  result?: unknown;
  error?: unknown;
}

export type JsonRpcAnswer =
  | { type: "json"; body: JsonRpcResponse }
  /** Each frame a JSON-RPC response; `errorOf` is a failure mid-stream as one. */
  | { type: "stream"; frames: AsyncGenerator<unknown>; errorOf: (err: unknown) => unknown };

/**
 * One JSON-RPC request to an agent, through the A2A SDK's transports: 1.0's
 * methods (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`,
 * `SubscribeToTask` …) by its handler, 0.3's (`message/send`,
 * `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`) by
 * its compat layer, chosen by the method's name. `A2A-Version`, when sent,
 * must be one the card offers (1.0 or 0.3).
 */
export async function answerJsonRpc(
  handler: A2ARequestHandler,
  card: AgentCard,
  { body, version }: { body: unknown; version: string | undefined },
): Promise<JsonRpcAnswer> {
  const method = methodOf(body);
  const legacy = isLegacyJsonRpcMethod(method);
  // Said as such (the SDK answers "invalid params" to an unknown method sent without params).
  if (!legacy && !METHODS.has(method))
    return {
      type: "json",
      body: {
        jsonrpc: "2.0",
        id: idOf(body),
        error: {
          code: METHOD_NOT_FOUND,
          message: `method ${JSON.stringify(method)} not found: A2A 1.0's SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask …, or 0.3's message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe`,
        },
      },
    };
  const mapError = legacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
    : JsonRpcTransportHandler.mapToJSONRPCError;
  const errorOf = (err: unknown) => ({ jsonrpc: "2.0", id: idOf(body), error: mapError(err) });
  const requestedVersion = version ?? (legacy ? "0.3" : "1.0");
  try {
    validateVersion(requestedVersion, card, "JSONRPC");
  } catch (err) {
    return { type: "json", body: errorOf(err) };
  }
  const context = new ServerCallContext({ requestedVersion });
  const transport = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
  const answer = await transport.handle(body as Record<string, unknown>, context);
  if (answer !== null && typeof answer === "object" && Symbol.asyncIterator in answer)
    return { type: "stream", frames: answer as AsyncGenerator<unknown>, errorOf };
  return { type: "json", body: answer as JsonRpcResponse };
}
