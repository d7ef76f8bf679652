import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Fastify from "fastify";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { handleError } from "../../src/http/plugins/error-handler.js";
import { useNotFoundHandler } from "../../src/http/plugins/not-found-handler.js";
import { usePlayground } from "../../src/http/plugins/playground.js";

/** The playground's serving (src/http/plugins/playground.ts) over a build of the test's own; the page itself is test/web's. */

function fakeBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "loopd-web-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(
    path.join(dir, "index.html"),
    '<!doctype html><script type="module" src="/assets/index-abc123.js"></script>',
  );
  writeFileSync(path.join(dir, "assets", "index-abc123.js"), "console.log('playground')");
  return dir;
}

async function appWith(options: Parameters<typeof usePlayground>[1]) {
  const app = Fastify();
  app.setErrorHandler(handleError);
  useNotFoundHandler(app);
  app.get("/healthz", async () => ({ status: "ok" }));
  await usePlayground(app, options);
  await app.ready();
  return app;
}

describe("the playground's page and files", () => {
  test("GET / is the built page, with a CSP that allows the page's own files only", async () => {
    const app = await appWith({ enabled: true, dir: fakeBuild() });
    const res = await app.inject({ url: "/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.body).toContain("/assets/index-abc123.js");
    const csp = String(res.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["cache-control"]).toBe("no-cache");
  });

  test("its hashed files are served to be kept; any other path under /assets/ or elsewhere is the API's JSON 404", async () => {
    const app = await appWith({ enabled: true, dir: fakeBuild() });
    const asset = await app.inject({ url: "/assets/index-abc123.js" });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["content-type"]).toMatch(/javascript/);
    expect(asset.headers["cache-control"]).toContain("immutable");
    for (const url of ["/assets/other.js", "/assets/", "/index.html", "/nope"]) {
      const res = await app.inject({ url });
      expect({ url, status: res.statusCode, code: res.json().error.code }).toEqual({
        url,
        status: 404,
        code: "not_found",
      });
    }
    const post = await app.inject({ method: "POST", url: "/" });
    expect(post.statusCode).toBe(405);
    expect(post.json().error.code).toBe("method_not_allowed");
  });

  test("never built: / says how to build it, and the rest answers as before", async () => {
    const app = await appWith({ enabled: true, dir: path.join(tmpdir(), "loopd-web-never-built") });
    const res = await app.inject({ url: "/" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("npm run build:web");
    expect((await app.inject({ url: "/healthz" })).statusCode).toBe(200);
  });

  test("PLAYGROUND=off: no page, / is the API's 404", async () => {
    expect(loadConfig({}).server.playground).toBe(true);
    expect(loadConfig({ PLAYGROUND: "off" }).server.playground).toBe(false);
    const app = await appWith({ enabled: loadConfig({ PLAYGROUND: "off" }).server.playground, dir: fakeBuild() });
    for (const url of ["/", "/assets/index-abc123.js"]) {
      const res = await app.inject({ url });
      expect({ url, status: res.statusCode, code: res.json().error.code }).toEqual({
        url,
        status: 404,
        code: "not_found",
      });
    }
  });
});
