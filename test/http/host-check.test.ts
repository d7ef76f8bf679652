/**
 * Only its own name: with keys off, a request to another name (DNS
 * rebinding) gets 421 and a foreign page's request 403, and neither changes
 * anything; loopback names, ALLOWED_HOSTS, loopd's own origin and
 * CORS_ORIGINS pass; probes answer whatever the Host.
 */
import type { InjectOptions } from "fastify";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({
  env: { ALLOWED_HOSTS: "loopd.example.com, *.internal.example, [fd00::1]", CORS_ORIGINS: "https://app.example.com" },
});
const inject = (options: InjectOptions) => f.loopd.app.inject(options);
const create = (headers: Record<string, string>) =>
  inject({ method: "POST", url: "/conversations", headers, payload: { title: "made" } });

describe("the Host, with keys off", () => {
  test("a name that is not this server's: 421 misdirected_request, and nothing is created", async () => {
    const before = await rowCounts(f.database);
    for (const host of [
      "attacker.example",
      "attacker.example:3000",
      "localhost.attacker.example",
      "loopd.example.com.attacker.example",
      "internal.example",
      "[fd00::2]:3000",
    ]) {
      const res = await create({ host });
      expect(res.statusCode, host).toBe(421);
      expect(res.json()).toEqual({
        error: {
          code: "misdirected_request",
          message: expect.stringContaining(JSON.stringify(host)),
          details: { host },
        },
      });
      expect(res.headers["x-request-id"]).toEqual(expect.any(String));
    }
    expect(
      (await inject({ method: "GET", url: "/conversations", headers: { host: "attacker.example:3000" } })).statusCode,
    ).toBe(421);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("loopback names with any port, IPv6 included, and the names of ALLOWED_HOSTS pass", async () => {
    for (const host of [
      "localhost",
      "localhost:3000",
      "LOCALHOST:8080",
      "127.0.0.1",
      "127.0.0.1:3000",
      "[::1]",
      "[::1]:3000",
      "loopd.example.com",
      "loopd.example.com:443",
      "a.internal.example",
      "b.c.internal.example:8443",
      "[fd00::1]:3000",
    ]) {
      expect((await create({ host })).statusCode, host).toBe(201);
    }
  });

  test("/healthz and /readyz answer any Host: probes name the pod's address", async () => {
    expect((await inject({ method: "GET", url: "/healthz", headers: { host: "10.1.2.3:3000" } })).statusCode).toBe(200);
    // Exempt too, whether or not this build serves it.
    expect(
      (await inject({ method: "GET", url: "/readyz?x=1", headers: { host: "attacker.example" } })).statusCode,
    ).not.toBe(421);
  });
});

describe("the Origin, with keys off", () => {
  test("a page of another origin: 403 forbidden_origin, preflight included, and nothing is created", async () => {
    const before = await rowCounts(f.database);
    for (const origin of [
      "https://attacker.example",
      "http://localhost:9999",
      "null",
      "https://app.example.com:8443",
    ]) {
      const res = await create({ host: "localhost:3000", origin, "content-type": "text/plain" });
      expect(res.statusCode, origin).toBe(403);
      expect(res.json()).toEqual({
        error: {
          code: "forbidden_origin",
          message: expect.stringContaining(JSON.stringify(origin)),
          details: { origin },
        },
      });
    }
    const preflight = await inject({
      method: "OPTIONS",
      url: "/conversations",
      headers: { origin: "https://attacker.example", "access-control-request-method": "POST" },
    });
    expect(preflight.statusCode).toBe(403);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("an answer to a paused run from a foreign page is refused and the run stays paused", async () => {
    const conversation = (
      await inject({
        method: "POST",
        url: "/conversations",
        payload: { provider: "anthropic", approval_required: ["calculate"] },
      })
    ).json().id as string;
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
    const run = (
      await inject({ method: "POST", url: `/conversations/${conversation}/messages`, payload: { content: "6*7?" } })
    ).json().run;
    expect(run.status).toBe("requires_action");
    const callId = run.required_action.tool_calls[0].tool_call_id as string;
    const answer = await inject({
      method: "POST",
      url: `/conversations/${conversation}/runs/${run.id}/actions`,
      headers: { origin: "https://attacker.example", "content-type": "application/json" },
      payload: { approvals: [{ tool_call_id: callId, approve: true }] },
    });
    expect(answer.statusCode).toBe(403);
    expect((await inject({ method: "GET", url: `/conversations/${conversation}/runs/${run.id}` })).json().status).toBe(
      "requires_action",
    );
    expect(f.llm.requests).toHaveLength(1);
  });

  test("loopd's own origin (the Host's, either scheme) and CORS_ORIGINS pass", async () => {
    expect((await create({ host: "localhost:3000", origin: "http://localhost:3000" })).statusCode).toBe(201);
    expect((await create({ host: "loopd.example.com", origin: "https://loopd.example.com" })).statusCode).toBe(201);
    expect((await create({ host: "[::1]:3000", origin: "http://[::1]:3000" })).statusCode).toBe(201);
    const cors = await create({ host: "localhost:3000", origin: "https://app.example.com" });
    expect(cors.statusCode).toBe(201);
    expect(cors.headers["access-control-allow-origin"]).toBe("https://app.example.com");
    const preflight = await inject({
      method: "OPTIONS",
      url: "/conversations",
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST" },
    });
    expect(preflight.statusCode).toBe(204);
  });
});

test("with keys on, ALLOWED_HOSTS applies too; the Origin is left to CORS (a key is never sent by the browser on its own)", async () => {
  const keyed = await startLoopd({
    database: f.database,
    llm: f.llm,
    env: { API_KEYS_REQUIRED: "true", ALLOWED_HOSTS: "loopd.example.com" },
  });
  try {
    const { key } = await keyed.services.store.keys.create({ tenant: "acme", name: null });
    const headers = { authorization: `Bearer ${key}` };
    const to = (host: string, extra: Record<string, string> = {}) =>
      keyed.app.inject({ method: "GET", url: "/conversations", headers: { ...headers, host, ...extra } });
    expect((await to("attacker.example")).json().error.code).toBe("misdirected_request");
    expect((await to("loopd.example.com:8443")).statusCode).toBe(200);
    expect((await to("localhost:3000")).statusCode).toBe(200);
    expect((await to("loopd.example.com", { origin: "https://elsewhere.example" })).statusCode).toBe(200);
  } finally {
    await keyed.close();
  }
});

test("ALLOWED_HOSTS takes names without a port, and says so", () => {
  expect(loadConfig({ ALLOWED_HOSTS: " Loopd.Example.com ,*.internal.example,," }).server.allowedHosts).toEqual([
    "loopd.example.com",
    "*.internal.example",
  ]);
  for (const bad of ["loopd.example.com:3000", "https://loopd.example.com", "fd00::1", "*"]) {
    expect(() => loadConfig({ ALLOWED_HOSTS: `localhost,${bad}` }), bad).toThrow(
      `ALLOWED_HOSTS: ${JSON.stringify(bad)} is not a host name: names go without a port (any port is accepted)`,
    );
  }
});
