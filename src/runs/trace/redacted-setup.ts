import type { Redactor } from "../../util/redact.js";

/**
 * Each redactor's copies of the model setups it redacted (`model.setup`,
 * see run-tracer.ts), by hash (the hash is of every field, so one hash is
 * one redacted copy): a setup's system prompt and tools are redacted once
 * for every run with that setup, not once per run. A few setups only are
 * kept, the oldest forgotten first.
 */
const redactedSetups = new WeakMap<Redactor, Map<string, Record<string, unknown>>>();
const KEPT_REDACTED_SETUPS = 64;
export function redactedSetup(redactor: Redactor, setup: { hash: string }): Record<string, unknown> {
  let kept = redactedSetups.get(redactor);
  if (!kept) redactedSetups.set(redactor, (kept = new Map()));
  let data = kept.get(setup.hash);
  if (!data) {
    data = redactor.value({ ...setup }) as Record<string, unknown>;
    if (kept.size >= KEPT_REDACTED_SETUPS) kept.delete(kept.keys().next().value!);
    kept.set(setup.hash, data);
  }
  return data;
}
