import type { ProviderName } from "../core/model-provider.js";
import type { AgentUnderTest } from "./agent-under-test.js";
import type { EvalCase } from "./eval-case.js";

/**
 * A case's conversation as `POST /conversations` takes it: the case's own
 * settings, or, with `agent`, that version's configuration as a conversation
 * pinned to it gets it (what the version leaves out gets the server's
 * defaults), but for what must not leave the eval's process (its webhook) or
 * hold a case (waiting out an outage). Either way a case that expects a finish
 * result gets the finish tool with that schema.
 */
export function caseSettings(
  evalCase: EvalCase,
  {
    provider,
    model,
    system,
    agent,
  }: { provider: ProviderName; model: string | null; system: string | undefined; agent: AgentUnderTest | undefined },
): Record<string, unknown> {
  const { conversation, expect } = evalCase;
  const own = agent
    ? (({ webhook: _webhook, on_provider_outage: _outage, ...rest }) => rest)(agent.configuration)
    : {
        system: conversation.system,
        tools: conversation.tools,
        ...(conversation.context && { context: conversation.context }),
        ...(conversation.client_tools && { client_tools: conversation.client_tools }),
      };
  return {
    ...own,
    title: evalCase.name.slice(0, 500),
    ...(system !== undefined && { system }),
    provider,
    ...(model !== null && { model }),
    ...(expect.finish_result && { finish: { result_schema: expect.finish_result } }),
  };
}

/**
 * The provider and model a case runs on: the command's, else the agent's
 * version's (the server's default provider when it names none, the case's
 * when there is no default either), else the
 * case's own; a model named for another provider is not taken to a new one.
 */
export function caseModel(
  evalCase: EvalCase,
  {
    overrides,
    agent,
    defaultProvider,
  }: {
    overrides: { provider?: ProviderName | undefined; model?: string | undefined };
    agent: AgentUnderTest | undefined;
    defaultProvider: ProviderName | null;
  },
): { provider: ProviderName; model: string | null } {
  const own = agent
    ? {
        provider: agent.configuration.provider ?? defaultProvider ?? evalCase.conversation.provider,
        model: agent.configuration.model ?? null,
      }
    : { provider: evalCase.conversation.provider, model: evalCase.conversation.model };
  const provider = overrides.provider ?? own.provider;
  return { provider, model: overrides.model ?? (provider === own.provider ? own.model : null) };
}
