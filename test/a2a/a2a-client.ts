import { randomUUID } from "node:crypto";
import { SendMessageRequest, type StreamResponse } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";

/** fetch with loopd's key on every request (the card's too). */
export const fetchWithKey =
  (key: string | null): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    if (key !== null) headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };

/** The A2A SDK's own client for an agent of loopd, from its card at `/a2a/:name/.well-known/agent-card.json`. */
export async function a2aClient(baseUrl: string, name: string, key: string | null): Promise<Client> {
  const fetchImpl = fetchWithKey(key);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // The trailing slash: the card's path is resolved against it.
  return factory.createFromUrl(`${baseUrl}/a2a/${name}/`);
}

type PartJson = { text: string } | { data: unknown };

/** A user's message, as 1.0's JSON-RPC takes it. */
export function userMessage(
  parts: string | PartJson[],
  { contextId, taskId, returnImmediately }: { contextId?: string; taskId?: string; returnImmediately?: boolean } = {},
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: "ROLE_USER",
      parts: typeof parts === "string" ? [{ text: parts }] : parts,
      ...(contextId && { contextId }),
      ...(taskId && { taskId }),
    },
    ...(returnImmediately && { configuration: { returnImmediately: true } }),
  });
}

/** Every event of a stream, in order. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The texts of a message's or an artifact's parts. */
export const textsOf = (parts: { content?: { $case: string; value: unknown } | undefined }[] | undefined) =>
  (parts ?? []).flatMap((p) => (p.content?.$case === "text" ? [p.content.value as string] : []));

export const dataOf = (parts: { content?: { $case: string; value: unknown } | undefined }[] | undefined) =>
  (parts ?? []).flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : []));
