import { AgentCard } from "@a2a-js/sdk";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";
import type { AgentWithVersion } from "../store/agent-repository.js";

/** The modes an agent takes and gives: text, and JSON as a data part. */
const MODES = ["text/plain", "application/json"];

/** Where an agent answers JSON-RPC, under `baseUrl` (the request's own scheme and host). */
export const agentEndpointOf = (baseUrl: string, name: string) => `${baseUrl}/a2a/${encodeURIComponent(name)}`;

/** An agent's card as the A2A SDK holds it (protocol 1.0, with a 0.3 interface beside it). */
export function agentCardOf(agent: AgentWithVersion, { baseUrl }: { baseUrl: string }): AgentCard {
  return AgentCard.fromJSON(v1CardJson(agent, baseUrl));
}

/**
 * The card as it is served: protocol 1.0's fields, and beside them the
 * ones a 0.3 client reads (`url`, `protocolVersion`, `preferredTransport`),
 * so one document serves both; a 1.0 client reads `supportedInterfaces`.
 */
export function agentCardJson(agent: AgentWithVersion, { baseUrl }: { baseUrl: string }) {
  return {
    ...v1CardJson(agent, baseUrl),
    url: agentEndpointOf(baseUrl, agent.name),
    protocolVersion: "0.3.0",
    preferredTransport: "JSONRPC",
  };
}

function v1CardJson(agent: AgentWithVersion, baseUrl: string) {
  const url = agentEndpointOf(baseUrl, agent.name);
  const description = agent.at.description ?? `The loopd agent ${agent.name}.`;
  const interfaces = duplicateInterfacesForLegacy(
    [{ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    ["JSONRPC"],
  );
  return {
    name: agent.name,
    description,
    supportedInterfaces: interfaces.map((i) => ({
      url: i.url,
      protocolBinding: i.protocolBinding,
      protocolVersion: i.protocolVersion,
    })),
    provider: { organization: "loopd", url: baseUrl },
    version: String(agent.at.version),
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [{ id: agent.name, name: agent.name, description, tags: ["loopd"] }],
  };
}
