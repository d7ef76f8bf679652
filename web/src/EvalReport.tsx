import { useState } from "react";
import type { Usage } from "./api.ts";
import { EvalComparison, type Comparison } from "./EvalComparison.tsx";

/** `npm run eval`'s JSON report (src/evals/eval-report.ts), as this page reads it. */
interface Report {
  target: string;
  started_at: string;
  provider: string | null;
  model: string | null;
  live_tools: boolean;
  min_pass: number;
  passed: boolean;
  summary: {
    cases: number;
    passed: number;
    pass_rate: number;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
    unpriced_cases: number;
    latency_ms: { total: number; mean: number; max: number };
  };
  cases: {
    name: string;
    file: string;
    pass: boolean;
    failures: string[];
    provider: string;
    model: string | null;
    steps: number;
    usage: Usage | null;
    latency_ms: number;
  }[];
}

/** The last report opened in this browser: a report is a file of the machine that ran the eval, never the server's. */
const STORAGE = "loopd.evalReport";
/** Past this a report is shown but not kept (a browser's storage holds a few MB in all). */
const KEEP_MAX_CHARS = 1_000_000;

/** A report of one eval, or of agent versions compared. */
type AnyReport = Report | (Comparison & Omit<Report, "summary" | "cases" | "passed" | "min_pass">);
const isComparison = (r: AnyReport): r is Extract<AnyReport, Comparison> => "agents" in r;

function parseReport(text: string): AnyReport {
  const report = JSON.parse(text) as Partial<Report & Comparison>;
  if (report && typeof report === "object" && Array.isArray(report.agents) && Array.isArray(report.changed))
    return report as AnyReport;
  if (!report || typeof report !== "object" || !report.summary || !Array.isArray(report.cases))
    throw new Error("this is not a report of npm run eval (it has no summary and cases)");
  return report as Report;
}

function stored(): AnyReport | null {
  try {
    const text = localStorage.getItem(STORAGE);
    return text ? parseReport(text) : null;
  } catch {
    return null;
  }
}

const usd = (n: number) => `$${n.toFixed(4)}`;
const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** The Evals page: the last eval report opened here, its summary and a row per case with what failed. */
export function EvalReport() {
  const [report, setReport] = useState<AnyReport | null>(stored);
  const [problem, setProblem] = useState<string | null>(null);
  const open = async (file: File | undefined) => {
    if (!file) return;
    setProblem(null);
    try {
      const text = await file.text();
      setReport(parseReport(text));
      if (text.length <= KEEP_MAX_CHARS) localStorage.setItem(STORAGE, text);
      else localStorage.removeItem(STORAGE);
    } catch (err) {
      setProblem(`${file.name}: ${(err as Error).message}`);
    }
  };
  const s = report && !isComparison(report) ? report.summary : undefined;
  return (
    <section className="evals" aria-label="Eval report">
      <div className="chat-head">
        <div>
          <h1>Eval report</h1>
          <p className="muted small">
            Run <code>npm run eval -- cases/</code>, then open the report it wrote (<code>reports/eval-….json</code>).
            The last one opened stays here.
          </p>
        </div>
      </div>
      <div className="evals-body">
        <label className="file-pick">
          Open a report
          <input type="file" accept="application/json,.json" onChange={(e) => void open(e.target.files?.[0])} />
        </label>
        {problem && (
          <p className="error" role="alert">
            {problem}
          </p>
        )}
        {!report && !problem && <p className="muted">No report opened yet.</p>}
        {report && isComparison(report) && (
          <>
            <p>
              <code>{report.target}</code> as {report.agents.map((a) => a.label).join(", ")},{" "}
              {report.live_tools ? "real tools" : "recorded tool results"};{" "}
              {new Date(report.started_at).toLocaleString()}
            </p>
            <EvalComparison report={report} />
          </>
        )}
        {report && !isComparison(report) && s && (
          <>
            <dl className="summary" aria-label="Summary">
              <dt>Pass rate</dt>
              <dd>
                <span className={`badge ${report.passed ? "status-completed" : "bad"}`}>
                  {report.passed ? "passed" : "under --min-pass"}
                </span>{" "}
                {s.passed}/{s.cases} ({percent(s.pass_rate)}; --min-pass {percent(report.min_pass)})
              </dd>
              <dt>Cases</dt>
              <dd>
                <code>{report.target}</code> on{" "}
                {report.provider
                  ? `${report.provider}/${report.model ?? "its default model"}`
                  : "each case's own model"}
                , {report.live_tools ? "real tools" : "recorded tool results"}
              </dd>
              <dt>Tokens</dt>
              <dd>
                {s.input_tokens} in · {s.output_tokens} out
              </dd>
              <dt>Cost</dt>
              <dd>
                {usd(s.cost_usd)}
                {s.unpriced_cases > 0 && ` (${s.unpriced_cases} without a price)`}
              </dd>
              <dt>Latency</dt>
              <dd>
                {s.latency_ms.mean} ms a case, {s.latency_ms.max} ms the longest
              </dd>
              <dt>Ran</dt>
              <dd>{new Date(report.started_at).toLocaleString()}</dd>
            </dl>
            <table className="eval-cases">
              <thead>
                <tr>
                  <th>Case</th>
                  <th>Result</th>
                  <th className="num">Steps</th>
                  <th className="num">Tokens</th>
                  <th className="num">Cost</th>
                  <th className="num">Latency</th>
                </tr>
              </thead>
              <tbody>
                {report.cases.map((c, i) => (
                  <tr key={i} aria-label={c.name}>
                    <td>
                      <strong>{c.name}</strong>
                      <div className="muted small">
                        {c.file} · {c.provider}/{c.model ?? "–"}
                      </div>
                      {c.failures.length > 0 && (
                        <ul className="failures">
                          {c.failures.map((f, j) => (
                            <li key={j} className="error-text small">
                              {f}
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td>
                      <span className={`badge ${c.pass ? "status-completed" : "bad"}`}>{c.pass ? "pass" : "fail"}</span>
                    </td>
                    <td className="num">{c.steps}</td>
                    <td className="num">{c.usage ? c.usage.input_tokens + c.usage.output_tokens : "–"}</td>
                    <td className="num">{c.usage?.cost_usd == null ? "–" : usd(c.usage.cost_usd)}</td>
                    <td className="num">{c.latency_ms} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </div>
    </section>
  );
}
