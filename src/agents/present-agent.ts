import type { AgentWithVersion } from "../store/agent-repository.js";

/** An agent at one of its versions, as the API shows it: its configuration's fields beside its own. */
export function presentAgent(row: AgentWithVersion) {
  return {
    id: row.id,
    name: row.name,
    version: row.at.version,
    description: row.at.description,
    ...row.at.configuration,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    archived_at: row.archivedAt ? row.archivedAt.toISOString() : null,
    from_file: row.fromFile,
  };
}
