import pLimit from "p-limit";
import { buildApp, createLogger } from "../app.js";
import type { Config } from "../config.js";
import type { ModelProvider, ProviderName } from "../core/model-provider.js";
import { openDatabase } from "../store/db.js";
import { configuredTools, createToolSets } from "../tools/configured-tools.js";
import { NO_SANDBOX } from "../tools/sandbox/tool-sandbox.js";
import { emptyToolsFile } from "../tools/tools-file.js";
import type { Tool } from "../tools/define-tool.js";
import type { EvalCase } from "./eval-case.js";
import { createRecordedAnswers, recordedLookup } from "./recorded-tools.js";
import { runEvalCase } from "./run-eval-case.js";
import type { CaseResult, EvalUsage, LoadedCase } from "./case-result.js";
import { scoreEvalCase, type EvalOutcome } from "./score-eval-case.js";
import { summaryOf, type EvalSummary } from "./eval-summary.js";
import { attachUserContent } from "../attachments/attach-user-content.js";
import type { AgentUnderTest } from "./agent-under-test.js";
import { caseModel, caseSettings } from "./case-settings.js";
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
 * nothing (`liveTools`: the real tools run, `TOOLS_FILE`'s servers included).
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
  agent,
  onResult,
}: {
  cases: LoadedCase[];
  config: Config;
  providers: Record<ProviderName, ModelProvider>;
  /** The tools the cases may name besides `TOOLS_FILE`'s. @default the built-ins (and `run_command`, when enabled) */
  tools?: Tool[];
  /** @default false */
  liveTools?: boolean;
  /** @default 4 */
  concurrency?: number;
  overrides?: EvalOverrides;
  /** Whether a provider has what it needs to be called (a key); a case on one that has not fails with the reason. @default always */
  canCall?: (provider: ProviderName) => string | true;
  /** An agent's version each case runs as, instead of its own settings. @default none */
  agent?: AgentUnderTest | undefined;
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
    // Not live, no source of TOOLS_FILE runs: the tools its entries fix answer from the recordings with the rest.
    tools: { ...config.tools, file: liveTools ? config.tools.file : emptyToolsFile() },
  };
  const database = await openDatabase({});
  try {
    await database.migrate();
    const loopd = await buildApp({
      config: evalConfig,
      database,
      providers,
      tools: liveTools ? tools : answers.standIns([...tools, ...(await fileToolsAtRest(config))]),
      logger: createLogger("silent"),
    });
    /** One case: run unless its provider cannot be called, then scored. */
    const evalOne = async ({ file, evalCase }: LoadedCase): Promise<CaseResult> => {
      const { provider, model } = caseModel(evalCase, {
        overrides,
        agent,
        defaultProvider: config.models.defaultProvider,
      });
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
          settings: caseSettings(evalCase, { provider, model, system: overrides.system, agent }),
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

/** The tools `TOOLS_FILE`'s entries fix before anything runs: an endpoint's, not a server's (listed once it runs). */
async function fileToolsAtRest(config: Config): Promise<Tool[]> {
  const sets = await createToolSets(config, { sandbox: NO_SANDBOX, log: createLogger("silent"), onRestart: () => {} });
  const tools = sets.flatMap((set) => set.tools());
  await Promise.all(sets.map((set) => set.close()));
  return tools;
}
