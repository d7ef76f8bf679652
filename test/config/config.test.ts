import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("TOOL_CONCURRENCY", () => {
  it("defaults to 8 and takes a positive integer", () => {
    expect(loadConfig({}).tools.concurrency).toBe(8);
    expect(loadConfig({ TOOL_CONCURRENCY: "3" }).tools.concurrency).toBe(3);
  });

  it.each(["0", "-1", "2.5", "many"])("refuses %s", (value) => {
    expect(() => loadConfig({ TOOL_CONCURRENCY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TOOL_CONCURRENCY: value })).toThrow(/TOOL_CONCURRENCY/);
  });
});

describe("IDLE_GC_MB", () => {
  it("defaults to 32; 0 turns the idle collection off", () => {
    expect(loadConfig({}).server.idleGcMb).toBe(32);
    expect(loadConfig({ IDLE_GC_MB: "0" }).server.idleGcMb).toBe(0);
  });

  it.each(["-1", "2.5", "lots"])("refuses %s", (value) => {
    expect(() => loadConfig({ IDLE_GC_MB: value })).toThrow(/IDLE_GC_MB/);
  });
});

describe("the configuration's sections", () => {
  it("group the settings by owner, each default the owner's own", async () => {
    const { DEFAULT_TOOL_TIMEOUT_MS } = await import("../../src/tools/execute-tool-calls.js");
    const { DEFAULT_MODEL_CALL_TIMEOUT_MS } = await import("../../src/agent/model-call-deadline.js");
    const { DEFAULT_GRACE_WINDOW_MS } = await import("../../src/agent/run-clock.js");
    const { DEFAULT_POOL } = await import("../../src/store/db.js");
    const config = loadConfig({});
    expect(Object.keys(config).sort()).toEqual([
      "agents",
      "attachments",
      "auth",
      "bodies",
      "ceilings",
      "database",
      "fairShares",
      "mcpSessions",
      "models",
      "openaiApi",
      "runs",
      "secrets",
      "server",
      "tools",
      "trace",
      "webhooks",
    ]);
    expect(config.fairShares).toEqual({
      maxStreamsPerTenant: 100,
      webhookMaxInflightPerHost: 2,
      webhookDnsServers: [],
    });
    expect(config.tools.timeoutMs).toBe(DEFAULT_TOOL_TIMEOUT_MS);
    expect(config.models.callTimeoutMs).toBe(DEFAULT_MODEL_CALL_TIMEOUT_MS);
    expect(config.runs.graceWindowMs).toBe(DEFAULT_GRACE_WINDOW_MS);
    expect(config.database.pool).toEqual(DEFAULT_POOL);
    expect(config.agents).toEqual({ file: null, entries: [] });
    expect(config.attachments).toEqual({ maxBytes: 5 * 1024 * 1024, maxCount: 10 });
    expect(config.bodies).toEqual({
      requestTimeoutMs: 30_000,
      inflightBytes: 256 * 1024 * 1024,
      inflightBytesPerKey: 64 * 1024 * 1024,
      messageTextBytes: 1024 * 1024,
    });
  });

  it("a key's share of the bodies in flight is a quarter of all unless set, and never more than all", () => {
    expect(loadConfig({ MAX_INFLIGHT_BODY_BYTES: "4000000" }).bodies.inflightBytesPerKey).toBe(1_000_000);
    expect(
      loadConfig({ MAX_INFLIGHT_BODY_BYTES: "4000000", MAX_INFLIGHT_BODY_BYTES_PER_KEY: "3000000" }).bodies
        .inflightBytesPerKey,
    ).toBe(3_000_000);
    expect(
      loadConfig({ MAX_INFLIGHT_BODY_BYTES: "4000000", MAX_INFLIGHT_BODY_BYTES_PER_KEY: "9000000" }).bodies
        .inflightBytesPerKey,
    ).toBe(4_000_000);
  });

  it("refuses MAX_STEPS over MAX_STEPS_LIMIT, naming both", () => {
    expect(() => loadConfig({ MAX_STEPS: "60" })).toThrow(
      "invalid configuration: MAX_STEPS: must be at most MAX_STEPS_LIMIT (50); it is 60",
    );
    expect(loadConfig({ MAX_STEPS: "60", MAX_STEPS_LIMIT: "60" }).runs.maxSteps).toBe(60);
  });

  it("turns API keys on whenever HOST is not a loopback address, unless told; bounds the tokens and the sweep interval", () => {
    expect(loadConfig({}).auth.required).toBe(false);
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]", "127.8.9.10"])
      expect(loadConfig({ HOST: host }).auth.required).toBe(false);
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "loopd.example.com"])
      expect(loadConfig({ HOST: host }).auth.required).toBe(true);
    expect(loadConfig({ HOST: "0.0.0.0", API_KEYS_REQUIRED: "false" }).auth.required).toBe(false);
    expect(loadConfig({ API_KEYS_REQUIRED: "true" }).auth.required).toBe(true);
    expect(() => loadConfig({ ADMIN_TOKEN: "short" })).toThrow(/ADMIN_TOKEN: must be at least 16 characters/);
    // Past 2^31 - 1 ms a timer fires at once: a 30-day sweep interval became a sweep every millisecond.
    expect(() => loadConfig({ RETENTION_DAYS: "90", RETENTION_SWEEP_S: String(30 * 86_400) })).toThrow(
      /RETENTION_SWEEP_S: must be at most 2147483 \(24 days\)/,
    );
  });

  it("takes a Standard Webhooks secret only, and keeps it out of logs like any secret", () => {
    expect(() => loadConfig({ WEBHOOK_SECRET: "not-a-secret" })).toThrow(
      /WEBHOOK_SECRET: must be a Standard Webhooks secret/,
    );
    const secret = `whsec_${Buffer.from("0123456789abcdef01234567").toString("base64")}`;
    const config = loadConfig({ WEBHOOK_SECRET: secret, WEBHOOK_MAX_ATTEMPTS: "3", WEBHOOK_ALLOW_PRIVATE: "true" });
    expect(config.webhooks).toEqual({
      secret,
      maxAttempts: 3,
      allowPrivate: true,
      timeoutMs: 10_000,
      retryBaseMs: 30_000,
    });
    expect(config.secrets).toContain(secret);
    expect(loadConfig({}).webhooks.secret).toBeNull();
    expect(() => loadConfig({ WEBHOOK_MAX_ATTEMPTS: "0" })).toThrow(/WEBHOOK_MAX_ATTEMPTS/);
  });

  it("finds the secrets among variables it does not read too", () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: "sk-ant-12345678", MY_SERVICE_TOKEN: "tok-abcdefgh" }).secrets).toEqual(
      expect.arrayContaining(["sk-ant-12345678", "tok-abcdefgh"]),
    );
  });
});
