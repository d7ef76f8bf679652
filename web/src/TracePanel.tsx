import { useEffect, useState } from "react";
import type { TraceTarget } from "./App.tsx";
import type { Api, ModelCallSpan, Span, Trace, Usage } from "./api.ts";
import { WebhookAttempts } from "./WebhookAttempts.tsx";

const ms = (n: number | null | undefined) =>
  n == null ? "–" : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
const usd = (n: number | null | undefined) => (n == null ? "no price" : `$${n.toFixed(n < 0.01 ? 5 : 4)}`);

function Tokens({ usage }: { usage: Usage }) {
  return (
    <span className="tokens">
      <span title="input tokens">{usage.input_tokens} in</span> ·{" "}
      <span title="output tokens">{usage.output_tokens} out</span>
      {(usage.cache_read_tokens > 0 || usage.cache_write_tokens > 0) && (
        <>
          {" "}
          ·{" "}
          <span title="prompt cache reads / writes">
            cache {usage.cache_read_tokens} read / {usage.cache_write_tokens} write
          </span>
        </>
      )}
    </span>
  );
}

/** A run's trace: its outcome, usage and budget; each model call attempt (failed ones with their status and error, a fallback marked) with its provider and model, latency, time to first token, tokens, and the exact request on demand. */
export function TracePanel({ api, target, onClose }: { api: Api; target: TraceTarget; onClose: () => void }) {
  const [trace, setTrace] = useState<Trace | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [requests, setRequests] = useState<Map<number, ModelCallSpan["request"] & { verified?: boolean }> | null>(null);
  const [shown, setShown] = useState<Set<number>>(new Set());
  const { conversationId, runId, version } = target;

  useEffect(() => {
    let live = true;
    setProblem(null);
    api.trace(conversationId, runId).then(
      (t) => live && setTrace(t),
      (err: Error) => live && setProblem(err.message),
    );
    return () => void (live = false);
  }, [api, conversationId, runId, version]);
  useEffect(() => {
    setRequests(null);
    setShown(new Set());
  }, [runId]);

  /** Show or hide the request of the model call span `seq` (an attempt: a step may have several). */
  const toggleRequest = async (seq: number) => {
    const next = new Set(shown);
    if (next.has(seq)) next.delete(seq);
    else next.add(seq);
    setShown(next);
    if (requests?.has(seq) || !next.has(seq)) return;
    try {
      const full = await api.trace(conversationId, runId, true);
      const map = new Map<number, ModelCallSpan["request"] & { verified?: boolean }>();
      for (const s of full.spans)
        if (s.type === "model.call") map.set(s.seq, { ...s.request, verified: s.request_verified });
      setRequests(map);
    } catch (err) {
      setProblem((err as Error).message);
    }
  };

  /** The run as an eval case, downloaded as a file (`npm run eval -- <file>`). */
  const saveEvalCase = async () => {
    try {
      const evalCase = await api.evalCase(conversationId, runId);
      const url = URL.createObjectURL(
        new Blob([`${JSON.stringify(evalCase, null, 2)}\n`], { type: "application/json" }),
      );
      const link = Object.assign(document.createElement("a"), { href: url, download: `eval-case-${runId}.json` });
      link.click();
      // Once the download has taken the file: revoked at once, a browser may not have read it yet.
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setProblem((err as Error).message);
    }
  };

  const run = trace?.run;
  return (
    <div className="trace">
      <div className="trace-head">
        <h2>Trace</h2>
        <code className="small">{runId}</code>
        <button
          type="button"
          className="link"
          onClick={() => void saveEvalCase()}
          title="Download this run as a case for npm run eval"
        >
          Save as eval case
        </button>
        <button type="button" className="link close" onClick={onClose} aria-label="Close the trace">
          Close
        </button>
      </div>
      {problem && <p className="error">{problem}</p>}
      {!trace && !problem && <p className="muted">Loading…</p>}
      {run && (
        <dl className="summary">
          <dt>Status</dt>
          <dd>
            <span className={`badge status-${run.status}`}>{run.status}</span>{" "}
            {run.stop_reason && <span>stop: {run.stop_reason}</span>}
            {run.budget_exceeded && <span className="badge warn">budget: {run.budget_exceeded}</span>}
          </dd>
          <dt>Model</dt>
          <dd>
            {run.provider} · {run.model}
          </dd>
          <dt>Steps</dt>
          <dd>
            {run.steps}
            {run.budget && ` of ${run.budget.max_steps}`}
          </dd>
          <dt>Tokens</dt>
          <dd>
            <Tokens usage={run.usage} />
          </dd>
          <dt>Cost</dt>
          <dd>{usd(run.usage.cost_usd)}</dd>
          {run.budget && (
            <>
              <dt>Budget</dt>
              <dd>
                {[
                  `${run.budget.max_steps} steps`,
                  run.budget.max_tokens != null && `${run.budget.max_tokens} tokens`,
                  run.budget.max_seconds != null && `${run.budget.max_seconds} s`,
                  run.budget.max_cost_usd != null && `$${run.budget.max_cost_usd}`,
                ]
                  .filter(Boolean)
                  .join(" · ")}
              </dd>
            </>
          )}
          {run.error && (
            <>
              <dt>Error</dt>
              <dd className="error-text">
                {run.error.code}: {run.error.message}
              </dd>
            </>
          )}
        </dl>
      )}
      <ol className="spans">
        {trace &&
          withAttempts(trace.spans).map(({ span, attempt }) => (
            <SpanRow
              key={span.seq}
              span={span}
              attempt={attempt}
              shown={shown}
              requests={requests}
              onToggle={(seq) => void toggleRequest(seq)}
            />
          ))}
      </ol>
      <WebhookAttempts api={api} conversationId={conversationId} runId={runId} version={version} />
    </div>
  );
}

/** Where a model call span stands in its step: its attempt number, whether the step has several, and whether it went to another model than the attempt before (a fallback). */
interface Attempt {
  n: number;
  of: number;
  fallback: boolean;
}

/** The spans, each model call with its attempt (retries and fallbacks are attempts of the same step). */
function withAttempts(spans: Span[]): { span: Span; attempt: Attempt | null }[] {
  const calls = spans.filter((s) => s.type === "model.call");
  return spans.map((span) => {
    if (span.type !== "model.call") return { span, attempt: null };
    const ofStep = calls.filter((c) => c.step === span.step);
    const n = ofStep.indexOf(span) + 1;
    const before = ofStep[n - 2];
    const fallback = before !== undefined && (before.provider !== span.provider || before.model !== span.model);
    return { span, attempt: { n, of: ofStep.length, fallback } };
  });
}

function SpanRow({
  span,
  attempt,
  shown,
  requests,
  onToggle,
}: {
  span: Span;
  attempt: Attempt | null;
  shown: Set<number>;
  requests: Map<number, ModelCallSpan["request"] & { verified?: boolean }> | null;
  onToggle: (seq: number) => void;
}) {
  switch (span.type) {
    case "model.call": {
      const request = requests?.get(span.seq);
      const failed = span.outcome === "failed";
      const several = attempt !== null && attempt.of > 1;
      return (
        <li
          className={`span step${failed ? " failed" : ""}`}
          aria-label={`Step ${span.step}${several ? `, attempt ${attempt.n}` : ""}`}
        >
          <div className="step-title">
            <strong>Step {span.step}</strong>
            {several && (
              <span className="muted">
                attempt {attempt.n} of {attempt.of}
              </span>
            )}
            {attempt?.fallback && <span className="badge warn">fallback</span>}
            <code className="small" title="the provider and model this attempt went to">
              {span.provider} · {span.model}
            </code>
            {failed ? (
              <span className="error-text">failed{span.status !== null ? ` (${span.status})` : " (no response)"}</span>
            ) : (
              <span className="muted">stop: {span.response.stop_reason}</span>
            )}
          </div>
          <div className="figures">
            <span title="latency">latency {ms(span.latency_ms)}</span>
            {!failed && <span title="time to first token">TTFT {ms(span.ttft_ms)}</span>}
            {!failed && <Tokens usage={span.response.usage} />}
          </div>
          {failed && <p className="error-text small">{span.error}</p>}
          <button type="button" className="link" aria-expanded={shown.has(span.seq)} onClick={() => onToggle(span.seq)}>
            {shown.has(span.seq) ? "Hide request" : "Show request"}
          </button>
          {shown.has(span.seq) &&
            (request?.body ? (
              <>
                {request.verified !== undefined && (
                  <p className="small muted">
                    {request.verified
                      ? "✓ rebuilt request matches the recorded hash"
                      : "✗ rebuilt request differs from the recorded hash"}
                  </p>
                )}
                <pre className="request">{JSON.stringify(request.body, null, 2)}</pre>
              </>
            ) : (
              <p className="muted small">Loading the request…</p>
            ))}
        </li>
      );
    }
    case "tool.call":
      return (
        <li className={`span tool-span${span.is_error ? " failed" : ""}`}>
          <span className="muted">tool</span> <code>{span.name}</code>{" "}
          <span className="muted">
            {ms(span.duration_ms)} · {span.source}
          </span>
          {span.is_error && <span className="badge bad">error</span>}
        </li>
      );
    case "notice":
      return <li className="span notice">notice: {span.text}</li>;
    case "context.summary":
      return (
        <li className={`span notice${span.error ? " failed" : ""}`}>
          <span className="muted">summary</span> of messages {span.summarizes.from_seq}–{span.summarizes.to_seq} ·{" "}
          <code>{span.model}</code> <span className="muted">{ms(span.latency_ms)}</span>{" "}
          {span.usage && <Tokens usage={span.usage} />}
          {span.error ? <p className="error-text small">{span.error}</p> : <p className="small">{span.answer}</p>}
        </li>
      );
    case "model.setup":
      return null;
    case "run.end":
      return (
        <li className="span muted small">
          end: {span.status}
          {span.stop_reason && ` · ${span.stop_reason}`}
        </li>
      );
    case "run.paused":
      return (
        <li className="span muted small">
          paused: waiting for {span.pending.length} call{span.pending.length === 1 ? "" : "s"}
        </li>
      );
    default:
      return <li className="span muted small">{span.type}</li>;
  }
}
