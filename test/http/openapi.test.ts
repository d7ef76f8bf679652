import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { LOOPD_LOGO_SVG } from "../../src/http/loopd-logo.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

/**
 * /openapi.json is what Postman, code generators and /docs read: it must lint
 * clean with Redocly's recommended rules (examples checked against their
 * schemas: redocly.yaml), and describe every route the app serves.
 */

const f = useLoopd();
let doc: any;
let dir: string;

beforeAll(async () => {
  const res = await f.loopd.app.inject({ method: "GET", url: "/openapi.json" });
  expect(res.statusCode).toBe(200);
  doc = res.json();
  dir = mkdtempSync(path.join(tmpdir(), "loopd-openapi-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: Array<{ pointer: string }>;
}

/** The Redocly CLI (it has no programmatic API) on the document, with the repository's redocly.yaml. */
async function lint(document: unknown): Promise<Problem[]> {
  const file = path.join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(document));
  const cli = path.join(
    path.dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")),
    "bin",
    "cli.js",
  );
  const config = fileURLToPath(new URL("../../redocly.yaml", import.meta.url));
  const run = promisify(execFile)(process.execPath, [cli, "lint", file, "--format=json", `--config=${config}`], {
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    maxBuffer: 64 * 1024 * 1024,
  });
  // The CLI exits 1 when it finds errors; its report is on stdout either way.
  const { stdout } = await run.catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
  return (JSON.parse(stdout) as { problems: Problem[] }).problems;
}

const said = (problems: Problem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`).join("\n");

/** Every method and path the app serves, from Fastify's route tree; HEAD and Swagger UI's own routes left out. */
function servedRoutes(): string[] {
  const tree = f.loopd.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split("\n")) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const url = stack.join("").replace(/:(\w+)/g, "{$1}");
    // The reference page and the playground (its page and hashed files) are pages, not the API.
    if (url.startsWith("/docs") || url === "/" || url.startsWith("/assets/")) continue;
    for (const method of (m[3] ?? "").split(", ").filter((x) => x && x !== "HEAD")) {
      // WebSocket mode's upgrade (docs/openai-sdk.md) is no HTTP operation an OpenAPI document can describe.
      if (method === "GET" && url === "/v1/responses") continue;
      routes.push(`${method} ${url}`);
    }
  }
  return routes;
}

describe("/openapi.json", () => {
  test("lints with no errors under Redocly's recommended rules, its examples matching their schemas", async () => {
    const problems = await lint(doc);
    const errors = problems.filter((p) => p.severity === "error");
    expect(errors, said(errors)).toEqual([]);
  }, 60_000);

  test("the linter does catch an example that does not match its schema", async () => {
    const broken = structuredClone(doc);
    broken.paths["/conversations/{id}"].get.responses["200"].content["application/json"].example.no_such_field = 1;
    expect((await lint(broken)).filter((p) => p.severity === "error").map((p) => p.ruleId)).toEqual([
      "no-invalid-media-type-examples",
    ]);
  }, 60_000);

  test("every route the app serves is there, with a summary, an operationId, a tag and a described 2xx", () => {
    const served = servedRoutes();
    expect(served).toEqual(
      expect.arrayContaining([
        "GET /healthz",
        "GET /readyz",
        "POST /conversations",
        "GET /conversations",
        "GET /conversations/{id}",
        "PATCH /conversations/{id}",
        "DELETE /conversations/{id}",
        "GET /conversations/{id}/messages",
        "POST /conversations/{id}/messages",
        "GET /conversations/{id}/runs",
        "GET /conversations/{id}/runs/{run_id}",
        "POST /conversations/{id}/runs/{run_id}/cancel",
        "POST /conversations/{id}/runs/{run_id}/actions",
        "GET /conversations/{id}/runs/{run_id}/events",
        "GET /openapi.json",
      ]),
    );
    const documented = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([url, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${url}`),
    );
    expect(documented.sort()).toEqual([...served].sort());
    const operationIds = new Set<string>();
    for (const route of served) {
      const [method, url] = route.split(" ") as [string, string];
      const operation = doc.paths[url][method.toLowerCase()];
      expect(operation.summary, route).toEqual(expect.any(String));
      expect(operation.tags, route).toHaveLength(1);
      expect(operationIds.has(operation.operationId), `${route}: operationId ${operation.operationId} twice`).toBe(
        false,
      );
      operationIds.add(operation.operationId);
      const statuses = Object.keys(operation.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        `${route} has no 2xx`,
      ).toBe(true);
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        expect(response.description, `${route} ${status}`).not.toBe("Default Response");
      }
    }
  });

  test("every error answer is the contract's error body", () => {
    for (const [url, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
          if (Number(status) < 400) continue;
          const media = response.content["application/json"];
          expect(media.schema.required, `${method} ${url} ${status}`).toEqual(["error"]);
          // `/v1/*` is OpenAI's API, with OpenAI's error body.
          expect(media.schema.properties.error.required).toEqual(
            url.startsWith("/v1/") ? ["message", "type", "param", "code"] : ["code", "message", "details"],
          );
          expect(media.example.error.code ?? media.example.error.type, `${method} ${url} ${status}`).toEqual(
            expect.any(String),
          );
        }
      }
    }
  });

  test("the streaming routes describe their text/event-stream answer and its events", () => {
    const streamed = [
      doc.paths["/conversations/{id}/messages"].post,
      doc.paths["/conversations/{id}/runs/{run_id}/actions"].post,
      doc.paths["/conversations/{id}/runs/{run_id}/events"].get,
    ];
    for (const operation of streamed) {
      const events = operation.responses["200"].content["text/event-stream"];
      expect(events.schema.description, operation.operationId).toMatch(
        /run\.created[\s\S]*message\.created[\s\S]*text\.delta[\s\S]*run\.requires_action/,
      );
      expect(events.example).toMatch(/^id: 1\nevent: run\.created\ndata: \{/);
    }
    expect(Object.keys(doc.paths["/conversations/{id}/messages"].post.responses["200"].content)).toEqual([
      "application/json",
      "text/event-stream",
    ]);
    expect(Object.keys(doc.paths["/conversations/{id}/runs/{run_id}/events"].get.responses["200"].content)).toEqual([
      "text/event-stream",
    ]);
  });

  test("a body that may be left out is not marked required, and a 204 has no content", () => {
    expect(doc.paths["/conversations"].post.requestBody.required).toBe(false);
    expect(doc.paths["/conversations/{id}/messages"].post.requestBody.required).toBe(true);
    expect(doc.paths["/conversations/{id}"].delete.responses["204"]).toEqual({ description: "Deleted" });
  });

  test("declares the API key (Bearer or x-api-key) for every route but health and metrics, and the 401 and 429 answers", () => {
    expect(doc.components.securitySchemes).toMatchObject({
      apiKey: { type: "http", scheme: "bearer" },
      apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key" },
    });
    expect(doc.security).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }]);
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths["/readyz"].get.security).toEqual([]);
    expect(doc.paths["/metrics"].get.security).toEqual([]);
    expect(doc.paths["/conversations"].get.security).toBeUndefined();
    expect(Object.keys(doc.paths["/conversations/{id}"].get.responses)).toEqual(expect.arrayContaining(["401", "429"]));
  });
});

describe("/docs", () => {
  test("answers Swagger UI's page, whose scripts, styles and document load from this server", async () => {
    const app = f.loopd.app;
    const page = await app.inject({ method: "GET", url: "/docs" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.filter((a) => a.endsWith(".js"))).toHaveLength(3);
    for (const asset of assets) {
      expect(asset, "served here, not from a CDN").toMatch(/^\/docs\//);
      const res = await app.inject({ method: "GET", url: asset });
      expect(res.statusCode, asset).toBe(200);
      expect(res.headers["content-type"], asset).toMatch(
        asset.endsWith(".js") ? /javascript/ : asset.endsWith(".css") ? /css/ : /image/,
      );
      expect(res.rawPayload.length, asset).toBeGreaterThan(0);
    }
    const initializer = await app.inject({ method: "GET", url: "/docs/static/swagger-initializer.js" });
    expect(initializer.body).toContain("resolveUrl('./json')");
    // loopd's name in the top bar and the tab, not the framework's logo.
    expect(page.body).toContain("<title>loopd API</title>");
    expect(assets).toContain("/docs/static/theme/loopd-icon.svg");
    expect(initializer.body).toContain(`data:image/svg+xml;base64,${Buffer.from(LOOPD_LOGO_SVG).toString("base64")}`);
    const frameworkLogo = readFileSync(
      new URL("../../node_modules/@fastify/swagger-ui/static/logo.svg", import.meta.url),
    ).toString("base64");
    expect(initializer.body).not.toContain(frameworkLogo);
    const json = await app.inject({ method: "GET", url: "/docs/json" });
    expect(json.json()).toEqual(doc);
  });

  test("an unknown page under /docs is the contract's 404, a wrong method the contract's 405", async () => {
    const missing = await f.loopd.app.inject({ method: "GET", url: "/docs/static/nope.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe("not_found");
    const wrong = await f.loopd.app.inject({ method: "POST", url: "/openapi.json" });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.json().error.code).toBe("method_not_allowed");
  });
});
