import { z } from "zod";
import { withExamples } from "../openapi.js";
import { conversationParams } from "./conversations.js";
import { id, position, text, usageSchema } from "./shared.js";

/** Runs, as zod: a run's path, its events query, the answer to its pending calls, and the run as it is answered. */

export const runParams = conversationParams.extend({ run_id: id().describe("The run's id (`run_…`)") });

export const eventsQuery = z.object({
  after: position()
    .optional()
    .describe("Events after this event id (`Last-Event-ID` wins when both are sent); neither: from the first"),
});

/** `POST …/runs/:run_id/actions`: every pending call answered in one request. */
export const answerActionsBody = withExamples(
  z.strictObject({
    approvals: z
      .array(z.strictObject({ tool_call_id: id(), approve: z.boolean(), reason: text().max(2_000).optional() }))
      .max(128)
      .default([]),
    tool_outputs: z
      .array(
        z.strictObject({ tool_call_id: id(), output: text().max(1_000_000), is_error: z.boolean().default(false) }),
      )
      .max(128)
      .default([]),
    actor: text().max(200).optional(),
    stream: z.boolean().optional(),
  }),
  {
    "approve a call": { approvals: [{ tool_call_id: "mock_call_1", approve: true }], actor: "ada@example.com" },
    "deny a call, saying why": {
      approvals: [{ tool_call_id: "mock_call_2", approve: false, reason: "too big to matter" }],
    },
    "a client tool's output, then stream the rest": {
      tool_outputs: [{ tool_call_id: "mock_call_1", output: "INV-42 created for ACME, 120.00 EUR" }],
      stream: true,
    },
  },
);

export const runSchema = z.object({
  id: z.string(),
  conversation_id: z.string(),
  status: z.enum(["queued", "running", "requires_action", "waiting", "completed", "incomplete", "failed", "cancelled"]),
  stop_reason: z.string().nullable(),
  steps: z.number().int(),
  provider: z.string(),
  model: z.string(),
  usage: usageSchema,
  /** Every model that answered a step of the run (its own, and fallbacks that stood in), with its step count. */
  models_used: z.array(z.object({ provider: z.string(), model: z.string(), steps: z.number().int() })),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** The agent version its conversation was pinned to when the run was made; null without an agent. */
  agent: z.object({ name: z.string(), version: z.number().int() }).nullable(),
  /** The child runs its calls of agents (`agent__<name>`) started, each in its own conversation, in the order they started. */
  children: z.array(z.object({ conversation_id: z.string(), run_id: z.string() })),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  /** Which budget ended the run, when one did. */
  budget_exceeded: z.enum(["steps", "tokens", "seconds", "cost"]).optional(),
  /** The limits the run was given. */
  budget: z
    .object({
      max_steps: z.number(),
      max_tokens: z.number().nullable(),
      max_seconds: z.number().nullable(),
      max_cost_usd: z.number().nullable(),
      grace_turn: z.boolean(),
    })
    .optional(),
  /** On a run asked to end with `finish`: what the call reported, or null. */
  result: z
    .object({ summary: z.string(), confidence: z.number().nullable(), result: z.unknown() })
    .nullable()
    .optional(),
  /** While `queued`: the run just ahead of it (active or queued). */
  queued_behind: z.string().nullable().optional(),
  /** While `waiting` (every model down, `on_provider_outage: "wait"`): since when, when it is probed next, when it gives up, how many times it parked. */
  outage: z
    .object({ since: z.string(), next_probe_at: z.string(), give_up_at: z.string(), probes: z.number().int() })
    .optional(),
  /** While `requires_action`: the calls it waits on. */
  required_action: z
    .object({
      expires_at: z.string(),
      tool_calls: z.array(
        z.object({
          tool_call_id: z.string(),
          name: z.string(),
          input: z.record(z.string(), z.unknown()),
          action: z.enum(["approve", "submit_output"]),
          /** A call a child agent's run waits on: that run (the answer given here is carried to it). */
          child: z.object({ conversation_id: z.string(), run_id: z.string() }).optional(),
        }),
      ),
    })
    .optional(),
});
