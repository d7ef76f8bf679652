/**
 * Keeps secrets out of what loopd writes down (traces, logs, errors a run
 * records): the values of configured secrets (API keys and the like, see
 * `secretsOf`), and whatever follows an `Authorization` or `x-api-key`
 * header name in a text, are replaced by `[redacted]`.
 */
export interface Redactor {
  text(text: string): string;
  /** A copy of a JSON-like value with every string redacted (the value itself when nothing needed it). */
  value<T>(value: T): T;
}

export const REDACTED = "[redacted]";

/** A header and its value in a text: `Authorization: Bearer …`, `"x-api-key":"…"`, `authorization=…`. */
const HEADER_VALUE =
  /((?:authorization|x-api-key|api[-_]key)["']?\s*[:=]\s*["']?)(?:(?:bearer|basic)\s+)?[^\s"',;}]+/gi;

/** Shorter values are not treated as secrets: replacing them would garble ordinary text. */
const MIN_SECRET_LENGTH = 8;

export function createRedactor(secrets: readonly string[]): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const values = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  const text = (input: string): string => {
    let out = input;
    for (const secret of values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.replace(HEADER_VALUE, `$1${REDACTED}`);
  };
  const value = <T>(input: T): T => {
    if (typeof input === "string") return text(input) as T;
    if (Array.isArray(input)) return input.map(value) as T;
    if (input && typeof input === "object")
      return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, value(v)])) as T;
    return input;
  };
  return { text, value };
}

/** Environment variables whose values are secrets: provider keys, and anything named like a key, token, secret or password. */
export const SECRET_NAME = /(^|_)(API_KEY|KEY|TOKEN|SECRET|PASSWORD)$/i;

/** The secret values of an environment: what `createRedactor` must keep out of traces and logs. */
export function secretsOf(env: NodeJS.ProcessEnv): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value && SECRET_NAME.test(name)) secrets.push(value.trim());
  }
  // A URL may carry a password too: the database's, a model server's.
  for (const [name, value] of Object.entries(env)) {
    const password = name === "DATABASE_URL" || name.endsWith("_URL") ? passwordOf(value) : null;
    if (password) secrets.push(password, encodeURIComponent(password));
  }
  return secrets;
}

function passwordOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return decodeURIComponent(new URL(url).password) || null;
  } catch {
    return null;
  }
}

const redactors = new WeakMap<object, Redactor>();
/** The redactor of a configuration's secrets, made once per configuration. */
export function redactorOf(config: { secrets: readonly string[] }): Redactor {
  let redactor = redactors.get(config);
  if (!redactor) redactors.set(config, (redactor = createRedactor(config.secrets)));
  return redactor;
}

/** A URL as it may be shown: without the user and password it may carry. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}
