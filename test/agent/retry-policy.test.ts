import { describe, expect, test } from "vitest";
import { afterFailure, DEFAULT_RETRY, type RetrySettings } from "../../src/agent/retry-policy.js";
import type { ProviderErrorKind } from "../../src/core/model-provider.js";

const settings: RetrySettings = { baseMs: 500, maxAttempts: 4, maxWaitMs: 30_000 };
const error = (kind: ProviderErrorKind, retryAfterMs: number | null = null) => ({ kind, retryAfterMs });
const decide = (
  e: ReturnType<typeof error>,
  {
    attempt = 1,
    timeLeftMs = 600_000,
    random = (): number => 1,
    s = settings,
  }: { attempt?: number; timeLeftMs?: number; random?: () => number; s?: RetrySettings } = {},
) => afterFailure(e, { attempt, settings: s, timeLeftMs, random });

describe("afterFailure", () => {
  test("the defaults", () => {
    expect(DEFAULT_RETRY).toEqual({ baseMs: 500, maxAttempts: 4, maxWaitMs: 30_000 });
  });

  test("a fatal error fails the step", () => {
    expect(decide(error("fatal"))).toEqual({ type: "fail" });
  });

  test("capacity and context-window errors fall over at once", () => {
    expect(decide(error("capacity"))).toEqual({ type: "fall_over", reason: "capacity" });
    expect(decide(error("context_window"))).toEqual({ type: "fall_over", reason: "context_window" });
  });

  test("a retryable error is retried after a jittered backoff no longer than its cap", () => {
    for (let attempt = 1; attempt < settings.maxAttempts; attempt++) {
      const cap = settings.baseMs * 2 ** (attempt - 1);
      expect(decide(error("retryable"), { attempt, random: () => 0.999999 })).toEqual({
        type: "retry",
        delayMs: cap,
      });
      expect(decide(error("retryable"), { attempt, random: () => 0 })).toEqual({ type: "retry", delayMs: 0 });
      const jittered = decide(error("retryable"), { attempt, random: Math.random });
      expect(jittered.type).toBe("retry");
      if (jittered.type === "retry") {
        expect(jittered.delayMs).toBeGreaterThanOrEqual(0);
        expect(jittered.delayMs).toBeLessThanOrEqual(cap);
      }
    }
  });

  test("no backoff is longer than 30 s, however many attempts", () => {
    const many = { ...settings, maxAttempts: 100 };
    expect(decide(error("retryable"), { attempt: 20, s: many })).toEqual({ type: "retry", delayMs: 30_000 });
  });

  test("the provider's Retry-After is waited for instead of the backoff", () => {
    expect(decide(error("retryable", 1234), { random: () => 0 })).toEqual({ type: "retry", delayMs: 1234 });
    expect(decide(error("retryable", settings.maxWaitMs))).toEqual({ type: "retry", delayMs: settings.maxWaitMs });
  });

  test("a Retry-After over MODEL_RETRY_MAX_WAIT_MS falls over at once", () => {
    expect(decide(error("retryable", settings.maxWaitMs + 1))).toEqual({
      type: "fall_over",
      reason: "retry_after_too_long",
    });
  });

  test("the last attempt falls over", () => {
    expect(decide(error("retryable"), { attempt: settings.maxAttempts })).toEqual({
      type: "fall_over",
      reason: "attempts_used_up",
    });
    expect(decide(error("retryable"), { attempt: 1, s: { ...settings, maxAttempts: 1 } })).toEqual({
      type: "fall_over",
      reason: "attempts_used_up",
    });
  });

  test("a wait past the time left gives up", () => {
    expect(decide(error("retryable", 5_000), { timeLeftMs: 4_000 })).toEqual({ type: "out_of_time" });
    expect(decide(error("retryable", 5_000), { timeLeftMs: 5_000 })).toEqual({ type: "out_of_time" });
    expect(decide(error("retryable"), { random: () => 0.999999, timeLeftMs: 100 })).toEqual({ type: "out_of_time" });
    expect(decide(error("retryable", 5_000), { timeLeftMs: 5_001 })).toEqual({ type: "retry", delayMs: 5_000 });
  });
});
