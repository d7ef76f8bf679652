import type { Agent } from "./api.ts";

/** An agent's fields that are not what a version holds (they are the same in every version, or the server's). */
const NOT_VERSIONED = new Set(["id", "name", "version", "created_at", "updated_at", "archived_at", "from_file"]);

/** A field of two versions: its value in each (undefined: not set), and whether they differ. */
export interface FieldDiff {
  field: string;
  before: unknown;
  after: unknown;
  changed: boolean;
}

/** JSON with every object's keys in order: the server keeps no key order, so values compare by this. */
export function canonical(value: unknown): string {
  if (value === undefined) return "";
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** Every field either version holds (its description and its configuration), in name order, the changed ones marked. */
export function diffVersions(before: Agent, after: Agent): FieldDiff[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((f) => !NOT_VERSIONED.has(f))
    .sort();
  return fields.map((field) => ({
    field,
    before: before[field],
    after: after[field],
    changed: canonical(before[field]) !== canonical(after[field]),
  }));
}

/** A value as the diff shows it: text as it is, anything else as indented JSON, an unset field as a dash. */
export const shown = (value: unknown) =>
  value === undefined || value === null ? "–" : typeof value === "string" ? value : JSON.stringify(value, null, 2);
