import { z } from "zod";
import { TENANT_NAME } from "../../store/key-repository.js";
import { documented, withExamples } from "../openapi.js";
import { agentName, agentVersionNumber } from "./agent-names.js";
import { configurationFields, configurationSchema } from "./conversations.js";
import { pageOf, text } from "./shared.js";

/**
 * Agents, as zod: what clients send (a new agent, a change) and what they
 * are answered. An agent's configuration is a conversation's
 * (`configurationFields`), checked the same way.
 */

const description = text().max(2_000).nullable().optional();

/** The fields of `POST /agents`, and of an entry of `AGENTS_FILE` (which adds `tenant`). */
export const agentFields = configurationFields.extend({ name: agentName(), description });

/** An entry of `AGENTS_FILE`: the fields of `POST /agents`, and the tenant whose agent it is (default `default`). */
export const agentFileEntry = agentFields.extend({
  tenant: z
    .string()
    .regex(TENANT_NAME, "must be 1–64 of A-Z, a-z, 0-9, _, . and -, starting with a letter or digit")
    .optional(),
});

export const createAgentBody = withExamples(agentFields, {
  "a support agent": {
    name: "support",
    description: "Answers customers' questions about their orders",
    system: "You are Acme's support agent. Be brief.",
    tools: ["get_current_time", "calculate"],
    budget: { max_steps: 8 },
  },
});

export const updateAgentBody = withExamples(
  configurationFields.extend({
    version: agentVersionNumber().describe("The version the client last saw; an older one is a 409 version_conflict"),
    description,
  }),
  { "a new system prompt over version 1": { version: 1, system: "You are Acme's support agent. Be brief and kind." } },
);

export const agentParams = z.object({ name: agentName().describe("The agent's name") });
export const agentVersionParams = agentParams.extend({
  version: z.coerce.number().int().min(1).max(2_147_483_647).describe("A version of the agent"),
});

export const agentSchema = configurationSchema.extend({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  archived_at: z.string().nullable(),
  /** Written by `AGENTS_FILE`: read-only over HTTP. */
  from_file: z.boolean(),
});

const agentExample: z.output<typeof agentSchema> = {
  id: "agt_0mx3f31orsipb4b4h80aja1l0",
  name: "support",
  version: 2,
  description: "Answers customers' questions about their orders",
  system: "You are Acme's support agent. Be brief and kind.",
  tools: ["get_current_time", "calculate"],
  budget: { max_steps: 8 },
  created_at: "2026-11-30T15:22:42.126Z",
  updated_at: "2026-12-01T09:10:11.000Z",
  archived_at: null,
  from_file: false,
};

export const theAgent = (what: string) => documented(agentSchema, what, agentExample);
export const agentPage = (what: string) =>
  documented(pageOf(agentSchema), what, { data: [agentExample], next_cursor: null });
