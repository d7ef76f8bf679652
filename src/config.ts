import { isLoopback } from "./util/is-loopback.js";
import { z } from "zod";
import { OperatorError } from "./errors.js";
import { databaseSettingsOf, databaseVariables } from "./store/database-config.js";
import { secretsOf } from "./util/redact.js";
import { DEFAULT_GRACE_WINDOW_MS } from "./agent/run-clock.js";
import { DEFAULT_MODEL_CALL_TIMEOUT_MS, DEFAULT_MODEL_STREAM_IDLE_MS } from "./agent/model-call-deadline.js";
import { DEFAULT_RETRY } from "./agent/retry-policy.js";
import { DEFAULT_COOLDOWN_AFTER, DEFAULT_COOLDOWN_MS } from "./agent/model-cooldown.js";
import { secretsOfToolsFile, ToolsFileError } from "./tools/tools-file.js";
import { toolSettingsOf, toolsFileOf, toolVariables } from "./tools/tool-config.js";
import { blank, intFromEnv, optionalString, optionalUrl } from "./util/env-values.js";
import { defaultProviderOf, endpointsOf, isOffline, modelVariables } from "./config/model-config.js";
import { webhookSettingsOf, webhookVariables } from "./webhooks/webhook-config.js";
import { attachmentSettingsOf, attachmentVariables } from "./attachments/attachment-config.js";
import { hostVariables } from "./http/plugins/host-config.js";
import { readSecretFiles, secretFileVariables } from "./config/secret-files.js";
import { fairShareVariables, fairSharesOf } from "./config/fair-share-config.js";
import { mcpSessionVariables, mcpSessionsOf } from "./config/mcp-session-config.js";
import { tracesUrl } from "./config/trace-config.js";
import { sandboxVariables } from "./tools/sandbox/sandbox-config.js";
import { bodySettingsOf, bodyVariables } from "./http/plugins/body-config.js";
import { ceilingSettingsOf, ceilingVariables } from "./conversations/ceiling-config.js";
import { agentVariables, AgentsFileError, loadAgentsFile } from "./agents/agents-file.js";
import { agentFileEntry } from "./http/schemas/agents.js";
import { compactSettingsOf, compactVariables } from "./openai-api/responses/compact-config.js";

/** A token a client must present: long enough not to be guessed. */
const secretToken = z.preprocess(
  (v) => (blank(v) ? undefined : v),
  z.string().min(16, "must be at least 16 characters (a random one: openssl rand -hex 24)").optional(),
);

/** A limit from the environment: unset (or empty) is no limit. */
const optionalPositive = (n: z.ZodNumber) =>
  z.preprocess((v) => (blank(v) ? undefined : Number(v)), n.positive().optional());

const variables = {
  PORT: z.preprocess((v) => (blank(v) ? undefined : Number(v)), z.number().int().min(0).max(65535).default(3000)),
  HOST: z.string().min(1).default("127.0.0.1"),
  ...databaseVariables,
  ...modelVariables,
  MAX_STEPS: intFromEnv(10),
  MAX_STEPS_LIMIT: intFromEnv(50),
  ...toolVariables,
  ACTION_TIMEOUT_S: intFromEnv(3600),
  MAX_AGENT_DEPTH: intFromEnv(3, { max: 10 }),
  RUN_MAX_TOKENS: optionalPositive(z.number().int()),
  RUN_MAX_SECONDS: optionalPositive(z.number()),
  RUN_MAX_COST_USD: optionalPositive(z.number()),
  PRICES_FILE: optionalString,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BODY_LIMIT_BYTES: intFromEnv(1_048_576),
  MAX_TOKENS: intFromEnv(4096),
  RUN_LEASE_MS: intFromEnv(30_000),
  MAX_STREAMS: intFromEnv(1_000),
  HISTORY_CACHE_MB: intFromEnv(64, { min: 0 }),
  SHUTDOWN_TIMEOUT_MS: intFromEnv(10_000),
  MODEL_CALL_TIMEOUT_MS: intFromEnv(DEFAULT_MODEL_CALL_TIMEOUT_MS),
  MODEL_STREAM_IDLE_MS: intFromEnv(DEFAULT_MODEL_STREAM_IDLE_MS),
  MODEL_RETRY_BASE_MS: intFromEnv(DEFAULT_RETRY.baseMs, { min: 0 }),
  MODEL_MAX_ATTEMPTS: intFromEnv(DEFAULT_RETRY.maxAttempts, { min: 1, max: 20 }),
  MODEL_RETRY_MAX_WAIT_MS: intFromEnv(DEFAULT_RETRY.maxWaitMs, { min: 0 }),
  MODEL_COOLDOWN_AFTER: intFromEnv(DEFAULT_COOLDOWN_AFTER, { min: 1 }),
  MODEL_COOLDOWN_MS: intFromEnv(DEFAULT_COOLDOWN_MS, { min: 1 }),
  MODEL_OUTAGE_MAX_WAIT_S: intFromEnv(3_600),
  RUN_GRACE_MS: intFromEnv(DEFAULT_GRACE_WINDOW_MS),
  INTAKE_PRIORITY_MS: intFromEnv(250, { min: 0, max: 10_000 }),
  MAX_EVENT_LOOP_DELAY_MS: intFromEnv(1_000, { min: 0 }),
  IDLE_GC_MB: intFromEnv(32, { min: 0 }),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  TRACE: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["on", "off"]).default("on")),
  /** Unset: on unless HOST is a loopback address. */
  API_KEYS_REQUIRED: z.preprocess((v) => (blank(v) ? undefined : v), z.enum(["true", "false"]).optional()),
  ADMIN_TOKEN: secretToken,
  RATE_LIMIT_PER_MIN: intFromEnv(600, { min: 0 }),
  MAX_ACTIVE_RUNS_PER_TENANT: intFromEnv(20, { min: 0 }),
  MAX_QUEUED_RUNS: intFromEnv(10, { min: 0 }),
  RETENTION_DAYS: optionalPositive(z.number().int()),
  /** At most 2^31 - 1 ms: a longer timer fires at once, every millisecond. */
  RETENTION_SWEEP_S: z.preprocess(
    (v) => (blank(v) ? undefined : Number(v)),
    z.number().int().min(1).max(2_147_483, "must be at most 2147483 (24 days)").default(3600),
  ),
  /** `https://app.example.com,https://admin.example.com`: the origins browsers may call loopd from. */
  CORS_ORIGINS: z.preprocess(
    (v) => (blank(v) ? "" : v),
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((o) => o.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z
            .url({ protocol: /^https?$/, error: "must be origins like https://app.example.com, separated by commas" })
            .transform((u) => new URL(u).origin),
        ),
      ),
  ),
  METRICS_TOKEN: secretToken,
  PLAYGROUND: z.preprocess((v) => (blank(v) ? undefined : v), z.enum(["on", "off"]).default("on")),
  ...webhookVariables,
  ...attachmentVariables,
  ...hostVariables,
  ...secretFileVariables,
  ...fairShareVariables,
  ...mcpSessionVariables,
  ...sandboxVariables,
  ...bodyVariables,
  ...ceilingVariables,
  ...agentVariables,
  ...compactVariables,
};

/** Every variable loopd reads (`.env.example` and the README's table list each one). */
export const CONFIG_VARIABLES = Object.keys(variables);

/**
 * The environment → loopd's settings, in sections by owner. What reads
 * variables as they were written (the secrets among them, `${VAR}` in
 * TOOLS_FILE, run_command's environment) reads `raw`, not the parsed values
 * (`PORT` is a number there).
 */
const configSchemaOf = (raw: Record<string, unknown>, fromFiles: Record<string, string> = {}) =>
  z.object(variables).transform((e, ctx) => {
    if (e.MAX_STEPS > e.MAX_STEPS_LIMIT) {
      ctx.addIssue({
        code: "custom",
        path: ["MAX_STEPS"],
        message: `must be at most MAX_STEPS_LIMIT (${e.MAX_STEPS_LIMIT}); it is ${e.MAX_STEPS}`,
      });
      return z.NEVER;
    }
    const toolsFile = toolsFileOf(e, raw);
    const providers = endpointsOf(e);
    const keysRequired = e.API_KEYS_REQUIRED === undefined ? !isLoopback(e.HOST) : e.API_KEYS_REQUIRED === "true";
    // A stand-in that costs nothing is for trying loopd out, not for every tenant of a shared server.
    const mockOffered = !keysRequired || e.MOCK_PROVIDER === "true";
    if (e.LLM_PROVIDER && isOffline(e.LLM_PROVIDER) && !mockOffered) {
      ctx.addIssue({
        code: "custom",
        path: ["LLM_PROVIDER"],
        message:
          "is mock, which is offered with API keys on only when MOCK_PROVIDER=true; set that, or a real provider",
      });
      return z.NEVER;
    }
    return {
      server: {
        port: e.PORT,
        host: e.HOST,
        logLevel: e.LOG_LEVEL,
        bodyLimitBytes: e.BODY_LIMIT_BYTES,
        /** SSE streams one process holds open at most; past it a new stream is a 503. */
        maxStreams: e.MAX_STREAMS,
        /** Mean event-loop lag above which requests are refused with 503 until it falls; 0 turns the check off. */
        maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
        /** Growth of V8's old generation (MB), from the lowest it fell to since loopd last collected, after which an idle moment is used for a full collection, so the next burst reuses the space instead of growing the heap; 0 leaves it to V8. */
        idleGcMb: e.IDLE_GC_MB,
        shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
        /** Origins browsers may call loopd from (CORS); none: CORS is off. */
        corsOrigins: e.CORS_ORIGINS,
        /** Names (`*.example.com`: every name under it) a request's `Host` may carry besides the loopback ones (src/http/plugins/host-check.ts). */
        allowedHosts: e.ALLOWED_HOSTS,
        /** The playground page at `/` (web/, built into dist/web); `PLAYGROUND=off`: not served. */
        playground: e.PLAYGROUND === "on",
      },
      database: databaseSettingsOf(e),
      models: {
        /** Named, or the first with a key or a server (an OpenAI-compatible local server needs no key), or the mock where it is offered; null: none (a conversation must name one). */
        defaultProvider: defaultProviderOf({ named: e.LLM_PROVIDER, endpoints: providers, mockOffered }),
        /** Whether conversations may use the offline mock provider: with API keys off, or `MOCK_PROVIDER=true`. */
        mockOffered,
        defaultModel: e.LLM_MODEL,
        /** The keys and servers of the model APIs. */
        providers,
        /** A model call's output limit. */
        maxTokens: e.MAX_TOKENS,
        /** The most one model call may take, retries included. */
        callTimeoutMs: e.MODEL_CALL_TIMEOUT_MS,
        /** How long a model call may go without a content-bearing chunk (keep-alives do not count). */
        streamIdleMs: e.MODEL_STREAM_IDLE_MS,
        /** A JSON price table that overrides the built-in prices. */
        pricesFile: e.PRICES_FILE,
        /** How model calls ride out a failing provider: loopd's one retry loop, and the circuit per model and server. */
        resilience: {
          retry: {
            baseMs: e.MODEL_RETRY_BASE_MS,
            maxAttempts: e.MODEL_MAX_ATTEMPTS,
            maxWaitMs: e.MODEL_RETRY_MAX_WAIT_MS,
          },
          /** After how many failed attempts in a row (within a minute) a model is skipped, and for how long before one call probes it. */
          cooldown: { after: e.MODEL_COOLDOWN_AFTER, cooldownMs: e.MODEL_COOLDOWN_MS },
          /** How long a run with `on_provider_outage: "wait"` and no `max_seconds` waits out an outage before it fails (s); it is probed no more often than `cooldownMs`. */
          outageMaxWaitS: e.MODEL_OUTAGE_MAX_WAIT_S,
        },
      },
      tools: toolSettingsOf(e, raw, toolsFile),
      runs: {
        maxSteps: e.MAX_STEPS,
        maxStepsLimit: e.MAX_STEPS_LIMIT,
        /** Server-wide budget defaults of a run (null: no limit); a conversation's or a request's own win. */
        budget: {
          maxTokens: e.RUN_MAX_TOKENS ?? null,
          maxSeconds: e.RUN_MAX_SECONDS ?? null,
          maxCostUsd: e.RUN_MAX_COST_USD ?? null,
        },
        /** The grace call's time when a run's time budget ran out: all a run may pass `max_seconds` by. */
        graceWindowMs: e.RUN_GRACE_MS,
        /** The most a model call waits while requests that start runs are being taken (`Intake`); 0: it never waits. */
        intakePriorityMs: e.INTAKE_PRIORITY_MS,
        /** How long a paused run waits for the application's answer before its calls are given up (a conversation may set its own). */
        actionTimeoutS: e.ACTION_TIMEOUT_S,
        /** How deep agents may call agents (`agent__<name>`): the top run is depth 1; a call past it is refused with an error result. */
        maxAgentDepth: e.MAX_AGENT_DEPTH,
        /** How long a run's lease lasts before another process may take it over. */
        leaseMs: e.RUN_LEASE_MS,
        /** Conversations idle this many days are deleted (null: kept for ever), swept every `retentionSweepS`. */
        retentionDays: e.RETENTION_DAYS ?? null,
        retentionSweepS: e.RETENTION_SWEEP_S,
        /** A tenant's open runs (queued, running, paused) at most; 0: no cap. */
        maxActivePerTenant: e.MAX_ACTIVE_RUNS_PER_TENANT,
        /** Runs a conversation may hold queued (`on_busy: "enqueue"`/`"interrupt"`); 0: none. */
        maxQueued: e.MAX_QUEUED_RUNS,
        /** How much of the histories of conversations whose runs ended here is kept in memory for their next run; 0 keeps none. */
        historyCacheMb: e.HISTORY_CACHE_MB,
      },
      auth: {
        /** Requests need an API key (and act as its tenant); off, every request is the tenant `default`. */
        required: keysRequired,
        /** The token of the admin routes (`/admin/keys`); unset, they do not exist. */
        adminToken: e.ADMIN_TOKEN ?? null,
        /** The token `/metrics` asks for; unset, it is open. */
        metricsToken: e.METRICS_TOKEN ?? null,
        /** Requests per key per minute (with keys on); 0: no limit. */
        ratePerMin: e.RATE_LIMIT_PER_MIN,
      },
      trace: {
        /** Whether runs keep a trace (`TRACE=off` turns it off, to measure what it costs). */
        enabled: e.TRACE === "on",
        /** Where OpenTelemetry spans go (OTLP/HTTP); unset: no tracing at all. */
        otlpTracesUrl: tracesUrl(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, e.OTEL_EXPORTER_OTLP_ENDPOINT),
      },
      webhooks: webhookSettingsOf(e),
      attachments: attachmentSettingsOf(e),
      fairShares: fairSharesOf(e),
      /** loopd's own MCP server at `/mcp`: its sessions' bounds. */
      mcpSessions: mcpSessionsOf(e),
      bodies: bodySettingsOf(e),
      /** The operator's ceilings: budgets no run passes, the models allowed, a tenant's daily cost. */
      ceilings: ceilingSettingsOf(e),
      /** `AGENTS_FILE`'s agents, read and checked; written at every start (src/agents/apply-agents-file.ts). */
      agents: {
        file: e.AGENTS_FILE ?? null,
        entries: e.AGENTS_FILE ? loadAgentsFile(e.AGENTS_FILE, { entry: agentFileEntry }) : [],
      },
      /** The OpenAI-compatible API's own settings: the key that seals `/v1/responses/compact`'s compactions. */
      openaiApi: compactSettingsOf(e),
      /** Values that never appear in a trace, a log or a recorded error (API keys and the like, from the environment). */
      secrets: [...secretsOf({ ...(raw as NodeJS.ProcessEnv), ...fromFiles }), ...secretsOfToolsFile(toolsFile)],
    };
  });

export type Config = z.output<ReturnType<typeof configSchemaOf>>;

export class ConfigError extends OperatorError {
  override readonly name = "ConfigError";
}

/** Reads the environment once into a typed Config; a bad value stops start-up with a clear message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // `*_FILE` secrets are loopd's own: parsed and redacted, never in `raw` (what tools and children may see).
  const fromFiles = readSecretFiles(env);
  const schema = configSchemaOf(env, fromFiles);
  let parsed: ReturnType<typeof schema.safeParse>;
  try {
    parsed = schema.safeParse({ ...env, ...fromFiles });
  } catch (err) {
    if (err instanceof ToolsFileError || err instanceof AgentsFileError) throw new ConfigError(err.message);
    throw err;
  }
  if (!parsed.success) {
    const fromFile = (name: PropertyKey | undefined) =>
      typeof name === "string" && name in fromFiles ? ` (read from ${name}_FILE)` : "";
    const problems = parsed.error.issues
      .map((i) => `${i.path.join(".")}: ${i.message}${fromFile(i.path[0])}`)
      .join("; ");
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}
