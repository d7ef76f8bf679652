import type { AgentEvent } from "../core/agent-events.js";
import { runAgentLoop } from "../agent/run-agent-loop.js";
import { loopOptionsOf } from "./loop-options-of.js";
import { endsRefused, type RunOutcome } from "../core/run-outcome.js";
import { toolBoxOf } from "../tools/tool-box-of.js";
import { agentToolsOf } from "../tools/agent-tools.js";
import { loopToolsOf } from "../agent/finish-tool.js";
import { toolImageKeeper } from "../attachments/keep-tool-images.js";
import { RunInterruption } from "../core/interruptions.js";
import { describeError } from "../errors.js";
import type { RunRow } from "../store/schema.js";
import type { Services } from "../services.js";
import type { RunStart } from "./start-run.js";
import type { RunWriter } from "./run-writer.js";
import { INTERNAL } from "../store/conversation-repository.js";
import { carriedOutageOf, waitOutOutage } from "./wait-out-outage.js";

/**
 * Carries a run from its saved state to its end: the loop runs with every
 * message and event written as it happens, then the outcome and the terminal
 * event are recorded together. Never throws. A run interrupted (shutdown,
 * lease lost) is left active for the process that takes it over.
 */
export async function executeRun({
  services,
  start,
  writer,
  signal,
}: {
  services: Services;
  /** How the run came to execute here, with what its starter already read (the rest is read here). */
  start: RunStart;
  writer: RunWriter;
  signal: AbortSignal;
}) {
  const { run } = start;
  const known = start.kind === "created" ? start.conversation : undefined;
  const appended = start.kind === "created" ? start.appended : undefined;
  const { store, config, log } = services;
  const observer = services.telemetry.runStarted(run);
  let result: RunOutcome;
  let actionTimeoutS = config.runs.actionTimeoutS;
  let historyVersion = 0;
  let tenant: string | null = null;
  // The outage it was waiting out, until a model answers here.
  let carried = carriedOutageOf(run);
  try {
    const conversation = known ?? (await store.conversations.get(INTERNAL, run.conversationId));
    if (!conversation) return observer.end(null); // deleted meanwhile: its runs went with it
    tenant = conversation.tenantId;
    actionTimeoutS = conversation.actionTimeoutS ?? config.runs.actionTimeoutS;
    historyVersion = conversation.historyVersion;
    const finish = run.request.finish ?? null;
    const history = await services.histories.load(store, run.conversationId, conversation.historyVersion, appended);
    // The bytes of the history's attachments, and of the images the run's tools return as it goes (kept here too).
    const attachments = new Map(await store.attachments.dataOf(conversation.tenantId, history));
    const keepImages = toolImageKeeper({
      store,
      limits: config.attachments,
      tenant: conversation.tenantId,
      conversationId: conversation.id,
      attachments,
    });
    const toolBox = toolBoxOf({
      registry: services.registry,
      settings: services.config.tools,
      conversation,
      loopTools: loopToolsOf(finish),
      runId: run.id,
      keepImages,
      ownTools: await agentToolsOf(services.agentCaller, conversation),
    });
    result = await runAgentLoop(
      loopOptionsOf({
        services,
        start,
        conversation,
        history,
        attachments,
        toolBox,
        writer,
        signal,
        onEvent: (e) => {
          if (e.type === "model_call.finished") carried = null;
          logAgentEvent(services, run, e);
          forwardAgentEvent(writer, e);
          observer.onEvent(e);
        },
      }),
    );
  } catch (err) {
    if (err instanceof RunInterruption || signal.reason instanceof RunInterruption) return observer.end(null);
    // A fault of ours or of the database, not of the model. If the history
    // was left with an orphan call, the next run repairs it first.
    log.error({ run_id: run.id, err: describeError(err) }, "run stopped on an internal error");
    result = {
      status: "failed",
      stopReason: "error",
      steps: run.steps,
      usage: run.usage,
      error: {
        code: "internal",
        message: "the run stopped on an internal error; the history is kept and the next message continues from it",
      },
    };
  }
  if (signal.reason instanceof RunInterruption) {
    // Left active for the next owner; what was streamed so far is kept, and what the loop held for the end is saved.
    await (result.unsaved?.length ? writer.save(result.unsaved) : writer.flush()).catch(() => {});
    return observer.end(null);
  }
  // Every model down: with on_provider_outage "wait" the run parks (until its give-up time) instead of failing.
  result = waitOutOutage(result, {
    run,
    carried,
    cooldownMs: config.models.resilience.cooldown.cooldownMs,
    maxWaitS: config.models.resilience.outageMaxWaitS,
  });
  await writer.finish(result, { actionTimeoutS });
  // What it cost is in the tenant's day now: the next new run of the tenant here reads it.
  if (tenant !== null) services.tenantCost.forget(tenant);
  observer.end(result);
  // The next run of this conversation here reads only what comes after it.
  // A refused turn is marked in the database as the run ends, not in this copy: the next run reads it again.
  const refused = endsRefused(result.stopReason);
  if (result.history && writer.ended && !refused)
    services.histories.keep(run.conversationId, result.history, historyVersion);
}

function forwardAgentEvent(writer: RunWriter, e: AgentEvent) {
  switch (e.type) {
    case "text.delta":
      return writer.emit("text.delta", { delta: e.delta });
    case "tool_call.started":
      return writer.emit("tool_call.started", { tool_call_id: e.tool_call_id, name: e.name, input: e.input });
    case "tool_call.completed":
      return; // written with the call's result (see the loop's save)
    case "model_call.finished":
      writer.traceModelCall(e);
      writer.countModel(e.provider, e.request.model);
      return writer.setProgress(e.run_steps, e.run_usage);
    case "model_call.failed":
      return writer.traceModelCall(e);
    case "model.retry":
    case "model.fallback":
    case "step.restarted": {
      const { type, ...data } = e;
      return writer.emit(type, data);
    }
    case "context.summary":
      writer.traceSummary(e);
      return writer.setProgress(e.run_steps, e.run_usage);
    case "usage.added":
      return writer.setProgress(e.run_steps, e.run_usage);
  }
}

function logAgentEvent({ log }: Services, run: RunRow, e: AgentEvent) {
  switch (e.type) {
    case "model_call.finished":
      return log.info(
        {
          run_id: run.id,
          step: e.step,
          provider: e.provider,
          model: e.model,
          stop_reason: e.raw_stop_reason ?? e.stop_reason,
          usage: e.usage,
          ms: e.duration_ms,
        },
        "model call",
      );
    case "model_call.failed":
      return log.warn(
        {
          run_id: run.id,
          step: e.step,
          provider: e.provider,
          model: e.model,
          error: e.error,
          status: e.status,
          ms: e.duration_ms,
        },
        "model call failed",
      );
    case "model.retry":
      return log.warn(
        {
          run_id: run.id,
          step: e.step,
          provider: e.provider,
          model: e.model,
          attempt: e.attempt,
          delay_ms: e.delay_ms,
        },
        "model call failed; retrying",
      );
    case "model.fallback":
      return log.warn(
        { run_id: run.id, step: e.step, from: e.from, to: e.to, reason: e.reason.code },
        "model call goes to the next model of the chain",
      );
    case "tool_call.completed": {
      const line = {
        run_id: run.id,
        tool_call_id: e.tool_call_id,
        name: e.name,
        status: e.status,
        duration_ms: e.duration_ms,
        result_chars: e.content.length,
      };
      // What the model passed may hold what users wrote: only at debug.
      if (log.isLevelEnabled("debug"))
        return log.debug({ ...line, arguments: clip(JSON.stringify(e.input), 200) }, "tool call");
      return log.info(line, "tool call");
    }
    default:
      return;
  }
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more)`);
