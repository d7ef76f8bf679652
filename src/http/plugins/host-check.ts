import type { FastifyInstance } from "fastify";
import { isLoopback } from "../../util/is-loopback.js";
import { replyError } from "./error-handler.js";

/**
 * Probes name the pod's address (Kubernetes, Docker health checks) and
 * reading health gives nothing away: these answer whatever the `Host` or
 * the `Origin`.
 */
const EXEMPT = new Set(["/healthz", "/readyz"]);

/** What the loopback names are spelled as in a `Host` (IPv6 without its brackets). */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

/** `name`, `name:port`, `[v6]` or `[v6]:port`: the name, lower case, IPv6 without brackets; null for anything else. */
const HOST = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/;

export function hostnameOf(host: string): string | null {
  const match = HOST.exec(host.toLowerCase());
  return match ? (match[1] ?? match[2]!) : null;
}

/** Whether a `Host` header names a loopback name or one of `allowed` (`*.example.com`: every name under example.com), any port. */
export function hostMatcher(allowed: readonly string[]): (host: string | undefined) => boolean {
  const names = new Set([
    ...LOOPBACK_NAMES,
    ...allowed.filter((a) => !a.startsWith("*.")).map((a) => a.replace(/^\[|\]$/g, "")),
  ]);
  const suffixes = allowed.filter((a) => a.startsWith("*.")).map((a) => a.slice(1));
  return (host) => {
    if (host === undefined) return false;
    const name = hostnameOf(host);
    if (name === null) return false;
    // An address literal cannot be rebound: 127.0.0.2 is as safe as 127.0.0.1.
    return names.has(name) || suffixes.some((s) => name.endsWith(s)) || isLoopback(name);
  };
}

/** Whether `origin` is the server's own: the scheme aside, the authority the browser put in `Host` (a TLS proxy in front makes it https). */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  const authority = origin.startsWith("http://")
    ? origin.slice(7)
    : origin.startsWith("https://")
      ? origin.slice(8)
      : null;
  return authority !== null && host !== undefined && authority === host.toLowerCase();
}

/**
 * Only its own name: what a browser can be made to send cannot use the API.
 *
 * - With keys off, a `Host` that is neither a loopback name nor in
 *   `ALLOWED_HOSTS` → `421 misdirected_request`. DNS rebinding points a
 *   name the attacker owns at 127.0.0.1; the browser then treats loopd as
 *   the attacker's own site and reads its answers, but it still sends the
 *   attacker's name as `Host`. With keys on, `ALLOWED_HOSTS`, when set,
 *   applies too (an operator who names the hosts means them).
 * - With keys off, a browser request (`Origin`) from a page that is neither
 *   loopd's own nor in `CORS_ORIGINS` → `403 forbidden_origin`, preflights
 *   included. CORS only keeps a foreign page from reading an answer; a
 *   "simple" POST (`mode: "no-cors"`, `text/plain`) is still carried out,
 *   and with keys off nothing else stops it.
 *
 * With keys on the `Origin` is not checked: a key is never sent by the
 * browser on its own (no cookie, no HTTP auth), so a foreign page cannot act
 * with one, and a page that holds one is the key holder's choice. That is
 * what CORS already says: a foreign page gets no CORS headers and cannot
 * send `Authorization` past its preflight, and the origins in
 * `CORS_ORIGINS` are the ones allowed either way. Checking it there would
 * only refuse loopd's own playground behind a proxy that rewrites `Host`.
 *
 * Registered first of the hooks that refuse: a refused request reaches
 * neither CORS (its preflight answer) nor a key lookup. Sets and suffixes
 * are made once; a request costs a regex match and a set lookup.
 */
export function useHostCheck(
  app: FastifyInstance,
  {
    keysRequired,
    allowedHosts,
    corsOrigins,
  }: { keysRequired: boolean; allowedHosts: readonly string[]; corsOrigins: readonly string[] },
): void {
  const checkHost = !keysRequired || allowedHosts.length > 0;
  const checkOrigin = !keysRequired;
  if (!checkHost && !checkOrigin) return;
  const isAllowedHost = hostMatcher(allowedHosts);
  const origins = new Set(corsOrigins);
  app.addHook("onRequest", async (req, reply) => {
    const path = req.url.split("?", 1)[0]!;
    if (EXEMPT.has(path)) return;
    const host = req.headers.host;
    if (checkHost && !isAllowedHost(host)) {
      const named = host === undefined ? null : host.slice(0, 200);
      return replyError(
        reply,
        "misdirected_request",
        `this server does not answer to the name ${JSON.stringify(named ?? "")}: it answers to localhost, 127.0.0.1, [::1] and the names in ALLOWED_HOSTS`,
        { host: named },
      );
    }
    const origin = req.headers.origin;
    if (checkOrigin && origin !== undefined && !origins.has(origin) && !isOwnOrigin(origin, host)) {
      return replyError(
        reply,
        "forbidden_origin",
        `browser requests from ${JSON.stringify(origin.slice(0, 200))} are refused: a page may call loopd only from loopd's own origin or one in CORS_ORIGINS`,
        { origin: origin.slice(0, 200) },
      );
    }
  });
}
