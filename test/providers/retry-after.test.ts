import { describe, expect, test } from "vitest";
import { retryAfterMsOf } from "../../src/providers/shared/retry-after.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const headers = (entries: Record<string, string>) => new Headers(entries);
const read = (entries: Record<string, string>) => retryAfterMsOf(headers(entries), () => NOW);

describe("retryAfterMsOf", () => {
  test("Retry-After in seconds", () => {
    expect(read({ "retry-after": "2" })).toBe(2000);
    expect(read({ "retry-after": "0.5" })).toBe(500);
    expect(read({ "retry-after": "0" })).toBe(0);
  });

  test("Retry-After as an HTTP date, from now", () => {
    expect(read({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" })).toBe(7000);
    expect(read({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" })).toBe(0);
  });

  test("retry-after-ms comes first", () => {
    expect(read({ "retry-after-ms": "250" })).toBe(250);
    expect(read({ "retry-after-ms": "250", "retry-after": "10" })).toBe(250);
  });

  test("an unreadable retry-after-ms falls back to Retry-After", () => {
    expect(read({ "retry-after-ms": "soon", "retry-after": "3" })).toBe(3000);
  });

  test("garbage, empty or absent headers give null", () => {
    expect(read({ "retry-after": "soon-ish" })).toBeNull();
    expect(read({ "retry-after": "  " })).toBeNull();
    expect(read({})).toBeNull();
    expect(retryAfterMsOf(null)).toBeNull();
    expect(retryAfterMsOf(undefined)).toBeNull();
    expect(retryAfterMsOf({} as never)).toBeNull();
  });

  test("a negative wait is no wait", () => {
    expect(read({ "retry-after": "-5" })).toBe(0);
    expect(read({ "retry-after-ms": "-5" })).toBe(0);
  });
});
