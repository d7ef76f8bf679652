import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Where `npm run build:web` puts the playground (web/vite.config.ts): dist/web of the package, from src/http/plugins or dist/http/plugins alike. */
export const PLAYGROUND_DIR = path.resolve(import.meta.dirname, "../../../dist/web");

/**
 * The page's own files only: its scripts and styles come from loopd, it
 * talks to loopd only, and it is framed by nobody. Nothing inline, no CDN.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: the images the user sent, read with the key and shown from memory.
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

/** What `/` says when the playground was never built (a checkout run with tsx, a test): how to build it, not an error. */
const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loopd</title></head>
<body><h1>loopd</h1><p>The playground is not built. Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it), then reload.</p>
<p>The API is here all the same: <a href="/docs">/docs</a>.</p></body></html>
`;

export interface PlaygroundOptions {
  /** `PLAYGROUND=off`: nothing is served, `/` is the API's 404. */
  enabled: boolean;
  /** The built page: index.html and assets/. @default PLAYGROUND_DIR */
  dir?: string;
}

/**
 * The playground (web/): `GET /` is its page, `/assets/…` its hashed
 * files, served from the build as it was at start. Only those paths are
 * taken: every other path stays the API's (an unknown one is still the
 * contract's JSON 404).
 */
export async function usePlayground(
  app: FastifyInstance,
  { enabled, dir = PLAYGROUND_DIR }: PlaygroundOptions,
): Promise<void> {
  if (!enabled) return;
  const index = path.join(dir, "index.html");
  const assets = path.join(dir, "assets");
  const page = (reply: FastifyReply) =>
    reply.headers(SECURITY_HEADERS).header("cache-control", "no-cache").type("text/html; charset=utf-8");

  // Read once, as the assets are: the page and the files it names come from one build.
  const html = await readFile(index, "utf8").catch(() => NOT_BUILT);
  await app.register(async (scope) => {
    scope.get("/", { schema: { hide: true } }, async (_req, reply) => page(reply).send(html));
    if (!existsSync(assets)) return;
    await scope.register(fastifyStatic, {
      root: assets,
      prefix: "/assets/",
      // The names carry their content's hash: a browser may keep them.
      immutable: true,
      maxAge: "365d",
      // Swagger UI decorates the reply with its own copy of the plugin.
      decorateReply: false,
      index: false,
      // A route per file of the build, no wildcard: any other path under /assets/ is the API's 404, not the file server's.
      wildcard: false,
      setHeaders: (reply) => void reply.headers(SECURITY_HEADERS),
      schemaHide: true,
    });
  });
}
