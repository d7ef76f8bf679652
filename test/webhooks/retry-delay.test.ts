import { expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { MAX_RETRY_DELAY_MS, retryDelayMs } from "../../src/webhooks/webhook-worker.js";

test("with the defaults, the first retry comes within a minute and WEBHOOK_MAX_ATTEMPTS tries span about an hour", () => {
  const { retryBaseMs: baseMs, maxAttempts } = loadConfig({}).webhooks;
  const schedule = (random: () => number) =>
    Array.from({ length: maxAttempts - 1 }, (_, i) => retryDelayMs(i + 1, { baseMs, random }));
  for (const random of [() => 0, () => 0.5, () => 0.999]) {
    const delays = schedule(random);
    expect(delays[0]).toBeLessThan(60_000);
    // Each later wait is longer than the one before, whatever the jitter.
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1]! * 1.3);
    const total = delays.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(45 * 60_000);
    expect(total).toBeLessThan(80 * 60_000);
  }
  // Jitter spreads the retries of receivers that failed together.
  expect(retryDelayMs(1, { baseMs, random: () => 0 })).toBe(24_000);
  expect(retryDelayMs(1, { baseMs, random: () => 1 })).toBe(36_000);
});

test("a wait never passes an hour (+20 % jitter), however many tries WEBHOOK_MAX_ATTEMPTS allows (review: try 39 overflowed the database's interval and was never recorded)", () => {
  const { maxAttempts } = loadConfig({ WEBHOOK_MAX_ATTEMPTS: "50", WEBHOOK_RETRY_BASE_MS: "3600000" }).webhooks;
  for (let attempt = 1; attempt < maxAttempts; attempt++) {
    expect(retryDelayMs(attempt, { baseMs: 30_000, random: () => 0.999 })).toBeLessThanOrEqual(
      MAX_RETRY_DELAY_MS * 1.2,
    );
    expect(retryDelayMs(attempt, { baseMs: 3_600_000, random: () => 0 })).toBe(MAX_RETRY_DELAY_MS * 0.8);
  }
  expect(retryDelayMs(40, { baseMs: 30_000, random: () => 0.5 })).toBe(MAX_RETRY_DELAY_MS);
});
