import { expect, test } from "vitest";
import { loadConfig } from "../../src/config.js";
import { retryDelayMs } from "../../src/webhooks/webhook-worker.js";

test("with the defaults, the first retry comes within a minute and WEBHOOK_MAX_ATTEMPTS tries span about an hour", () => {
  const { retryBaseMs: baseMs, maxAttempts } = loadConfig({}).webhooks;
  const schedule = (random: () => number) => Array.from({ length: maxAttempts - 1 }, (_, i) => retryDelayMs(i + 1, { baseMs, random }));
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
