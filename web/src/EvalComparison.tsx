/** A report of `npm run eval -- --agent a@1 --agent a@2` (src/evals/eval-report.ts, `comparisonReport`), as this page reads it. */
export interface Comparison {
  min_pass: number;
  passed: boolean;
  agents: {
    label: string;
    passed: boolean;
    summary: {
      cases: number;
      passed: number;
      pass_rate: number;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      unpriced_cases: number;
      steps: number;
      latency_ms: { p50: number };
    };
    cases: { name: string; file: string; pass: boolean; failures: string[] }[];
  }[];
  changed: { name: string; file: string; verdicts: Record<string, "pass" | "fail"> }[];
}

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;
const verdict = (pass: boolean) => (
  <span className={`badge ${pass ? "status-completed" : "bad"}`}>{pass ? "pass" : "fail"}</span>
);

/** The versions side by side: pass rate, tokens, cost, steps, latency p50; the cases whose verdict changed; every case's verdicts. */
export function EvalComparison({ report }: { report: Comparison }) {
  const columns = report.agents;
  const rows: [string, (s: Comparison["agents"][number]["summary"]) => string][] = [
    ["Tokens", (s) => `${s.input_tokens + s.output_tokens}`],
    ["Cost", (s) => `$${s.cost_usd.toFixed(4)}${s.unpriced_cases > 0 ? "*" : ""}`],
    ["Steps", (s) => `${s.steps}`],
    ["Latency p50", (s) => `${s.latency_ms.p50} ms`],
  ];
  return (
    <>
      <table className="eval-cases" aria-label="Comparison">
        <thead>
          <tr>
            <th />
            {columns.map((c) => (
              <th key={c.label} className="num">
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr aria-label="Pass rate">
            <td>Pass rate (--min-pass {percent(report.min_pass)})</td>
            {columns.map((c) => (
              <td key={c.label} className="num">
                <span className={`badge ${c.passed ? "status-completed" : "bad"}`}>
                  {c.passed ? "passed" : "under --min-pass"}
                </span>{" "}
                {c.summary.passed}/{c.summary.cases} ({percent(c.summary.pass_rate)})
              </td>
            ))}
          </tr>
          {rows.map(([name, f]) => (
            <tr key={name} aria-label={name}>
              <td>{name}</td>
              {columns.map((c) => (
                <td key={c.label} className="num">
                  {f(c.summary)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Changed verdict</h2>
      {report.changed.length === 0 ? (
        <p className="muted">No case changed verdict.</p>
      ) : (
        <ul className="changed-cases" aria-label="Changed verdict">
          {report.changed.map((c, i) => (
            <li key={i}>
              <strong>{c.name}</strong>{" "}
              {columns.map((col, j) => (
                <span key={col.label}>
                  {j > 0 && " → "}
                  {verdict(c.verdicts[col.label] === "pass")}
                </span>
              ))}
            </li>
          ))}
        </ul>
      )}
      <h2>Cases</h2>
      <table className="eval-cases" aria-label="Cases">
        <thead>
          <tr>
            <th>Case</th>
            {columns.map((c) => (
              <th key={c.label}>{c.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {columns[0]?.cases.map((c, i) => (
            <tr key={i} aria-label={c.name}>
              <td>
                <strong>{c.name}</strong>
                <div className="muted small">{c.file}</div>
              </td>
              {columns.map((col) => (
                <td key={col.label}>
                  {verdict(col.cases[i]!.pass)}
                  {col.cases[i]!.failures.length > 0 && (
                    <ul className="failures">
                      {col.cases[i]!.failures.map((f, j) => (
                        <li key={j} className="error-text small">
                          {f}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
