import pLimit from "p-limit";
import { buildApp, createLogger } from "../app.js";
import type { Config } from "../config.js";
import type { ModelProvider, ProviderName } from "../core/model-provider.js";
import { openDatabase } from "../store/db.js";
import { configuredTools } from "../tools/configured-tools.js";
import type { Tool } from "../tools/define-tool.js";
import type { EvalCase } from "./eval-case.js";
import { createRecordedAnswers, recordedLookup } from "./recorded-tools.js";
import { runEvalCase } from "./run-eval-case.js";
import type { CaseResult, EvalUsage, LoadedCase } from "./case-result.js";
import { scoreEvalCase, type EvalOutcome } from "./score-eval-case.js";
import { summaryOf, type EvalSummary } from "./eval-summary.js";
import { attachUserContent } from "../attachments/attach-user-content.js";
import { DEFAULT_TENANT } from "../http/plugins/request-tenant.js";

export interface EvalOverrides {
  /** @default each case's own */
  provider?: ProviderName | undefined;
  /** @default the case's model on its own provider, the provider's default on another */
  model?: string | undefined;
  /** Replaces each case's system prompt. */
  system?: string | undefined;
}

/**
 * Runs eval cases through the real loop: one loopd app over a throw-away
 * in-memory database (the service's own is never opened), each case a
 * conversation of it, up to `concurrency` at once, then scores each. The
 * tools are stand-ins that answer from each case's recorded results and run
 * nothing (`liveTools`: the real tools run, MCP servers included).
 */
export async function runEvals({
  cases,
  config,
  providers,
  tools = configuredTools(config),
  liveTools = false,
  concurrency = 4,
  overrides = {},
  canCall = () => true,
  onResult,
}: {
  cases: LoadedCase[];
  config: Config;
  providers: Record<ProviderName, ModelProvider>;
  /** The tools the cases may name. @default the configured ones (built-ins, `TOOLS_FILE`'s HTTP tools) */
  tools?: Tool[];
  /** @default false */
  liveTools?: boolean;
  /** @default 4 */
  concurrency?: number;
  overrides?: EvalOverrides;
  /** Whether a provider has what it needs to be called (a key); a case on one that has not fails with the reason. @default always */
  canCall?: (provider: ProviderName) => string | true;
  onResult?: (result: CaseResult) => void;
}): Promise<{ results: CaseResult[]; summary: EvalSummary }> {
  const answers = createRecordedAnswers();
  const evalConfig: Config = {
    ...config,
    // No guard: this server has one client, the runner itself, whose concurrency already bounds its load;
    // shedding its runs would only turn a busy machine into failed cases.
    server: { ...config.server, playground: false, maxEventLoopDelayMs: 0 },
    database: { ...config.database, admissionWaitMs: 0 },
    auth: { ...config.auth, required: false, ratePerMin: 0 },
    // Cases at once are runs of one tenant.
    runs: { ...config.runs, retentionDays: null, maxActivePerTenant: 0 },
    tools: { ...config.tools, mcp: liveTools ? config.tools.mcp : [] },
  };
  const database = await openDatabase({});
  try {
    await database.migrate();
    const loopd = await buildApp({
      config: evalConfig,
      database,
      providers,
      tools: liveTools ? tools : answers.standIns(tools),
      logger: createLogger("silent"),
    });
    /** One case: run unless its provider cannot be called, then scored. */
    const evalOne = async ({ file, evalCase }: LoadedCase): Promise<CaseResult> => {
      const provider = overrides.provider ?? evalCase.conversation.provider;
      const model =
        overrides.model ?? (provider === evalCase.conversation.provider ? evalCase.conversation.model : null);
      const base = { name: evalCase.name, file, provider, model };
      const callable = canCall(provider);
      if (callable !== true) return notRun(base, callable);
      const lookup = recordedLookup(evalCase.recorded);
      let conversationId: string | null = null;
      try {
        const run = await runEvalCase({
          app: loopd.app,
          store: loopd.services.store,
          evalCase,
          settings: settingsOf(evalCase, { provider, model, system: overrides.system }),
          lookup,
          maxStepsLimit: evalConfig.runs.maxStepsLimit,
          onConversation: (id) => answers.set((conversationId = id), lookup),
          attach: (id, blocks) =>
            attachUserContent(
              { store: loopd.services.store, limits: evalConfig.attachments },
              { tenant: DEFAULT_TENANT, conversationId: id, blocks, fieldOf: (i) => `history content[${i}]` },
            ),
        });
        return run.ran
          ? await resultOf({ ...base, model: run.model }, evalCase, run.outcome, run)
          : notRun(base, run.reason);
      } catch (err) {
        // What a case holds may break what loopd expects of stored data (a history edited by hand): that case fails, not the others.
        return notRun(
          base,
          `the case could not run: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
        );
      } finally {
        if (conversationId) answers.delete(conversationId);
      }
    };
    try {
      const limit = pLimit(concurrency);
      const results = await Promise.all(
        cases.map((loaded) =>
          limit(async () => {
            const result = await evalOne(loaded);
            onResult?.(result);
            return result;
          }),
        ),
      );
      return { results, summary: summaryOf(results) };
    } finally {
      await loopd.close();
    }
  } finally {
    await database.close();
  }
}

/** The case's conversation as `POST /conversations` takes it; a case that expects a finish result gets the finish tool with that schema. */
function settingsOf(
  evalCase: EvalCase,
  { provider, model, system }: { provider: ProviderName; model: string | null; system: string | undefined },
) {
  const { conversation, expect } = evalCase;
  return {
    title: evalCase.name.slice(0, 500),
    system: system ?? conversation.system,
    provider,
    ...(model !== null && { model }),
    tools: conversation.tools,
    ...(conversation.context && { context: conversation.context }),
    ...(conversation.client_tools && { client_tools: conversation.client_tools }),
    ...(expect.finish_result && { finish: { result_schema: expect.finish_result } }),
  };
}

type Base = Pick<CaseResult, "name" | "file" | "provider" | "model">;

async function resultOf(
  base: Base,
  evalCase: EvalCase,
  outcome: EvalOutcome,
  run: { usage: EvalUsage; latency_ms: number },
): Promise<CaseResult> {
  const failures = await scoreEvalCase(evalCase.expect, outcome);
  return {
    ...base,
    pass: failures.length === 0,
    failures,
    status: outcome.status,
    stop_reason: outcome.stop_reason,
    steps: outcome.steps,
    usage: run.usage,
    latency_ms: run.latency_ms,
    tool_calls: outcome.tool_calls,
    final_text: outcome.final_text,
  };
}

const notRun = (base: Base, reason: string): CaseResult => ({
  ...base,
  pass: false,
  failures: [reason],
  status: null,
  stop_reason: null,
  steps: 0,
  usage: null,
  latency_ms: 0,
  tool_calls: [],
  final_text: null,
});
