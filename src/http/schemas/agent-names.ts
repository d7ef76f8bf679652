import { z } from "zod";

/**
 * How an agent is named and pinned. 1–48 of [a-z0-9_-], so that
 * `agent__<name>` stays a valid tool name when agents call agents.
 */
export const AGENT_NAME = /^[a-z0-9_-]{1,48}$/;

export const agentName = () =>
  z.string().regex(AGENT_NAME, "must be 1–48 characters of a-z, 0-9, _ and - (lower case)");

/** A version number: Postgres integers from 1. */
export const agentVersionNumber = () => z.number().int().min(1).max(2_147_483_647);

/** `"support"` (its latest version) or `{"name": "support", "version": 3}`. */
export const agentRefSchema = z
  .union([agentName(), z.strictObject({ name: agentName(), version: agentVersionNumber() })], {
    error: 'must be an agent\'s name ("support") or a name and a version ({"name": "support", "version": 3})',
  })
  .optional()
  .describe(
    "The agent to start from: its name (the latest version) or `{name, version}`; the other fields override it",
  );
