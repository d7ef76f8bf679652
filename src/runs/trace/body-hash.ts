import { createHash, type Hash } from "node:crypto";

/**
 * The sha256 a trace keeps of each model request's body, so that a rebuild
 * can be checked. It is the sha256 of the body's canonical JSON: object keys
 * sorted (jsonb, where the rebuild's parts come from, does not keep key
 * order), except `messages`, which comes last. The history is the request's
 * end, then, and a run's tracer hashes each call from where the previous
 * call's request stopped being the same (`createBodyHasher`): a step costs
 * what it added, not its whole history again.
 */
export function bodySha256(body: object): string {
  const { head, items } = partsOf(body);
  const hash = createHash("sha256").update(head);
  items.forEach((item, i) => hash.update(i === 0 ? item : `,${item}`));
  return hash.update(tailOf(body)).digest("hex");
}

/** The sha256 of any JSON value's canonical form (keys sorted). */
export const jsonSha256 = (value: unknown): string => createHash("sha256").update(canonicalJson(value)).digest("hex");

/** How many hash states after the last messages of a request are kept for the next: the requests of a run differ only near their end. */
const KEPT_STATES = 8;

/** `bodySha256`, for the successive requests of one run: each call hashes from the first message that differs from the previous call's. */
export function createBodyHasher() {
  let prevHead: string | null = null;
  let prevItems: string[] = [];
  // states[i]: the hash after prevItems[0 … i], kept for the last KEPT_STATES items only.
  let states = new Map<number, Hash>();

  return (body: object): string => {
    const { head, items } = partsOf(body);
    let same = 0;
    if (head === prevHead)
      while (same < items.length && same < prevItems.length && items[same] === prevItems[same]) same++;
    // Resume from the state after the common prefix, when it is still kept.
    while (same > 0 && !states.has(same - 1)) same = 0;
    const hash = same === 0 ? createHash("sha256").update(head) : states.get(same - 1)!.copy();
    const next = new Map<number, Hash>();
    for (const [i, state] of states) if (i < same && i >= items.length - KEPT_STATES) next.set(i, state);
    for (let i = same; i < items.length; i++) {
      hash.update(i === 0 ? items[i]! : `,${items[i]}`);
      if (i >= items.length - KEPT_STATES) next.set(i, hash.copy());
    }
    prevHead = head;
    prevItems = items;
    states = next;
    return hash.update(tailOf(body)).digest("hex");
  };
}

/** The canonical JSON of the body up to its messages' first item, and of each item. */
function partsOf(body: object): { head: string; items: string[] } {
  const record = body as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => k !== "messages" && record[k] !== undefined)
    .sort();
  const fields = keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
  const messages = Array.isArray(record.messages) ? (record.messages as unknown[]) : null;
  if (!messages) return { head: `{${fields.join(",")}`, items: [] };
  return {
    head: `{${[...fields, '"messages":['].join(",")}`,
    items: messages.map((m) => (m === undefined ? "null" : canonicalJson(m))),
  };
}

const tailOf = (body: object) => (Array.isArray((body as { messages?: unknown }).messages) ? "]}" : "}");

/**
 * Canonical JSON of the objects already seen: the converted history is
 * shared between a run's requests (the providers keep it and never change it
 * once made), so each call serializes only what is new.
 */
const CANONICAL = new WeakMap<object, string>();

/** JSON.stringify with object keys sorted (of values never changed after: each object's text is kept). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  let json = CANONICAL.get(value);
  if (json !== undefined) return json;
  if (Array.isArray(value)) {
    json = `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  } else {
    const parts: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
    }
    json = `{${parts.join(",")}}`;
  }
  CANONICAL.set(value, json);
  return json;
}
