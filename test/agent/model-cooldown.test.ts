import { describe, expect, test } from "vitest";
import { createModelCooldown, type ModelKey } from "../../src/agent/model-cooldown.js";

const key: ModelKey = { provider: "anthropic", model: "claude-x", baseUrlHost: "api.anthropic.com" };
const error = { status: 529, message: "Overloaded" };

function clocked({ after = 3, cooldownMs = 30_000 } = {}) {
  let t = Date.parse("2026-01-01T00:00:00Z");
  const cooldown = createModelCooldown({ after, cooldownMs, now: () => t });
  return {
    cooldown,
    advance: (ms: number) => (t += ms),
    stateOf: (k: ModelKey = key) =>
      cooldown.list().find((h) => h.model === k.model && h.provider === k.provider && h.base_url_host === k.baseUrlHost)
        ?.state,
  };
}

describe("createModelCooldown", () => {
  test("a model never called is fine", () => {
    const { cooldown } = clocked();
    expect(cooldown.admit(key)).toEqual({ type: "call" });
  });

  test("N failures in a row within a minute open the circuit for the cooldown", () => {
    const { cooldown, advance, stateOf } = clocked({ after: 3 });
    cooldown.failed(key, error);
    advance(10_000);
    cooldown.failed(key, error);
    expect(stateOf()).toBe("ok");
    advance(10_000);
    cooldown.failed(key, error);
    expect(stateOf()).toBe("cooling_down");
    const admitted = cooldown.admit(key);
    expect(admitted.type).toBe("skip");
    const [health] = cooldown.list();
    expect(health).toMatchObject({
      state: "cooling_down",
      consecutive_failures: 3,
      last_error: { status: 529, message: "Overloaded" },
    });
    if (admitted.type === "skip") expect(new Date(admitted.until).toISOString()).toBe(health!.until);
  });

  test("N failures spread over more than a minute do not", () => {
    const { cooldown, advance, stateOf } = clocked({ after: 3 });
    cooldown.failed(key, error);
    advance(31_000);
    cooldown.failed(key, error);
    advance(30_000);
    cooldown.failed(key, error);
    expect(stateOf()).toBe("ok");
    expect(cooldown.admit(key)).toEqual({ type: "call" });
  });

  test("failures a few minutes apart, for hours, never open it and are all counted as in a row", () => {
    const { cooldown, advance, stateOf } = clocked({ after: 3 });
    for (let i = 0; i < 1_000; i++) {
      cooldown.failed(key, error);
      advance(120_000);
    }
    expect(stateOf()).toBe("ok");
    expect(cooldown.list()[0]).toMatchObject({ consecutive_failures: 1_000 });
  });

  test("a success resets the count", () => {
    const { cooldown, stateOf } = clocked({ after: 3 });
    cooldown.failed(key, error);
    cooldown.failed(key, error);
    cooldown.succeeded(key);
    cooldown.failed(key, error);
    cooldown.failed(key, error);
    expect(stateOf()).toBe("ok");
  });

  test("circuits are per provider, model and host", () => {
    const { cooldown, stateOf } = clocked({ after: 1 });
    cooldown.failed(key, error);
    const elsewhere = { ...key, baseUrlHost: "proxy.example" };
    expect(cooldown.admit(elsewhere)).toEqual({ type: "call" });
    expect(cooldown.admit({ ...key, model: "claude-y" })).toEqual({ type: "call" });
    expect(stateOf(elsewhere)).toBe("ok");
  });

  test("after the cooldown one call probes it; success closes the circuit", () => {
    const { cooldown, advance, stateOf } = clocked({ after: 1, cooldownMs: 5_000 });
    cooldown.failed(key, error);
    advance(4_999);
    expect(cooldown.admit(key).type).toBe("skip");
    advance(1);
    expect(cooldown.admit(key)).toEqual({ type: "call" });
    expect(stateOf()).toBe("probing");
    // While the probe is out, other calls are skipped.
    expect(cooldown.admit(key).type).toBe("skip");
    cooldown.succeeded(key);
    expect(stateOf()).toBe("ok");
    expect(cooldown.list()[0]).toMatchObject({ consecutive_failures: 0, until: null });
    expect(cooldown.admit(key)).toEqual({ type: "call" });
  });

  test("a failed probe opens the circuit again at once", () => {
    const { cooldown, advance, stateOf } = clocked({ after: 3, cooldownMs: 5_000 });
    for (let i = 0; i < 3; i++) cooldown.failed(key, error);
    advance(5_000);
    expect(cooldown.admit(key)).toEqual({ type: "call" });
    cooldown.failed(key, { status: null, message: "socket hang up" });
    expect(stateOf()).toBe("cooling_down");
    expect(cooldown.admit(key).type).toBe("skip");
    expect(cooldown.list()[0]!.last_error).toMatchObject({ status: null, message: "socket hang up" });
  });

  test("a probe that never reports is given up after the cooldown, and another probe goes", () => {
    const { cooldown, advance } = clocked({ after: 1, cooldownMs: 5_000 });
    cooldown.failed(key, error);
    advance(5_000);
    expect(cooldown.admit(key)).toEqual({ type: "call" });
    advance(5_000);
    expect(cooldown.admit(key)).toEqual({ type: "call" });
  });

  test("probe() probes a model still cooling down", () => {
    const { cooldown, stateOf } = clocked({ after: 1 });
    cooldown.failed(key, error);
    cooldown.probe(key);
    expect(stateOf()).toBe("probing");
    const other = { ...key, model: "fine" };
    cooldown.probe(other);
    expect(stateOf(other)).toBe("ok");
  });
});
