import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { compactKeyBytes } from "../../src/openai-api/responses/compact-config.js";
import { CompactionRefused, openCompaction, sealCompaction } from "../../src/openai-api/responses/compaction-seal.js";

const key = randomBytes(32);
const payload = { summary: "The user is Ada; she likes teal.", created_at: 1_764_967_971 };

describe("a compaction's seal", () => {
  test("opens with the same key for the same tenant, and hides what it holds", () => {
    const blob = sealCompaction(key, "acme", payload);
    expect(blob).toMatch(/^loopd\.cmp\.v1\.[A-Za-z0-9_-]+$/);
    expect(Buffer.from(blob.slice("loopd.cmp.v1.".length), "base64url").toString("latin1")).not.toContain("Ada");
    expect(openCompaction(key, "acme", blob)).toEqual(payload);
    // A new IV each time: the same summary never seals the same.
    expect(sealCompaction(key, "acme", payload)).not.toBe(blob);
  });

  test.each([
    ["another tenant", (b: string) => b, "beta", key, /another API key's tenant/],
    ["another key", (b: string) => b, "acme", randomBytes(32), /a key this server no longer has/],
    [
      "a changed byte",
      (b: string) => b.slice(0, -5) + (b.at(-5) === "A" ? "B" : "A") + b.slice(-4),
      "acme",
      key,
      /changed/,
    ],
    ["a cut", (b: string) => b.slice(0, 30), "acme", key, /cut short/],
    ["no prefix", (b: string) => b.slice(6), "acme", key, /not a compaction loopd wrote/],
    ["not base64url", (b: string) => `${b}+/=`, "acme", key, /not base64url/],
  ])("refuses %s", (_, spoil, tenant, withKey, message) => {
    const blob = spoil(sealCompaction(key, "acme", payload));
    expect(() => openCompaction(withKey, tenant, blob)).toThrow(CompactionRefused);
    expect(() => openCompaction(withKey, tenant, blob)).toThrow(message);
  });
});

describe("RESPONSES_COMPACT_KEY", () => {
  test("32 bytes as hex or base64; unset: null (loopd's own key, from the database)", () => {
    const bytes = randomBytes(32);
    expect(compactKeyBytes(bytes.toString("hex"))).toEqual(bytes);
    expect(compactKeyBytes(bytes.toString("base64"))).toEqual(bytes);
    expect(loadConfig({}).openaiApi).toEqual({ compactKey: null });
    expect(loadConfig({ RESPONSES_COMPACT_KEY: bytes.toString("base64") }).openaiApi.compactKey).toBe(
      bytes.toString("base64"),
    );
  });

  test.each(["short", randomBytes(16).toString("hex"), randomBytes(31).toString("base64"), "z".repeat(64)])(
    "refuses %s at start, naming the variable",
    (value) => {
      expect(() => loadConfig({ RESPONSES_COMPACT_KEY: value })).toThrow(
        /RESPONSES_COMPACT_KEY: must be 32 random bytes/,
      );
    },
  );

  test("is a secret: never in a trace, a log or a recorded error", () => {
    const value = randomBytes(32).toString("hex");
    expect(loadConfig({ RESPONSES_COMPACT_KEY: value }).secrets).toContain(value);
  });
});
