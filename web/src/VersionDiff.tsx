import type { Agent } from "./api.ts";
import { diffVersions, shown } from "./agent-diff.ts";

/** Two versions of an agent field by field: the changed fields first, each with both values; then how many are the same. */
export function VersionDiff({ before, after }: { before: Agent; after: Agent }) {
  const fields = diffVersions(before, after);
  const changed = fields.filter((f) => f.changed);
  const same = fields.filter((f) => !f.changed);
  return (
    <div className="version-diff" aria-label="Diff">
      <h2>
        Version {before.version} → {after.version}
      </h2>
      {changed.length === 0 ? (
        <p className="muted">No field differs.</p>
      ) : (
        <table className="eval-cases">
          <thead>
            <tr>
              <th>Field</th>
              <th>Version {before.version}</th>
              <th>Version {after.version}</th>
            </tr>
          </thead>
          <tbody>
            {changed.map((f) => (
              <tr key={f.field} aria-label={f.field} className="changed">
                <td>
                  <code>{f.field}</code>
                </td>
                <td>
                  <pre className="removed">{shown(f.before)}</pre>
                </td>
                <td>
                  <pre className="added">{shown(f.after)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {same.length > 0 && <p className="muted small">The same in both: {same.map((f) => f.field).join(", ")}.</p>}
    </div>
  );
}
