import type { ToolSpec } from "../../core/model-provider.js";

/**
 * `make`, made once per key object and shared after. A request body is
 * rebuilt for each model call, but its tools are not: a run hands each of
 * its calls the same specs array, and the registry hands every run the same
 * spec per tool. Sharing what is made from them keeps a call from copying
 * every schema again, and keeps the trace's hash of the body
 * (`canonicalJson` keeps each object's text) from serializing it again.
 * What is made must never be changed after.
 */
export function perObject<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) made.set(key, (value = make(key)));
    return value;
  };
}

/** A tool's input schema as the APIs take it (`type: "object"` always set). */
export const objectSchemaOf = perObject((inputSchema: ToolSpec["inputSchema"]) => ({ ...inputSchema, type: "object" as const }));
