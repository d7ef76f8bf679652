import { describe, expect, test } from "vitest";
import { nextModel, type Tried } from "../../src/agent/model-chain.js";
import { createModelCooldown, type ModelKey } from "../../src/agent/model-cooldown.js";

const keys: ModelKey[] = ["a", "b", "c"].map((model) => ({ provider: "openai", model, baseUrlHost: "api.openai.com" }));
const error = { status: 503, message: "unavailable" };

function setup() {
  let t = 0;
  const cooldown = createModelCooldown({ after: 1, cooldownMs: 10_000, now: () => t });
  return { cooldown, advance: (ms: number) => (t += ms) };
}

describe("nextModel", () => {
  test("the first model from `from` on that is not cooling down; those skipped are noted as tried", () => {
    const { cooldown } = setup();
    cooldown.failed(keys[0]!, error);
    const tried: Tried = new Map();
    expect(nextModel({ from: 0, keys, cooldown, tried })).toBe(1);
    expect(tried).toEqual(new Map([[0, { attempts: 0, error: null }]]));
    expect(nextModel({ from: 2, keys, cooldown, tried })).toBe(2);
  });

  test("when every model is cooling down, the one whose cooldown ends first is probed", () => {
    const { cooldown, advance } = setup();
    cooldown.failed(keys[1]!, error);
    advance(1_000);
    cooldown.failed(keys[2]!, error);
    advance(1_000);
    cooldown.failed(keys[0]!, error);
    const tried: Tried = new Map();
    expect(nextModel({ from: 0, keys, cooldown, tried })).toBe(1);
    expect(cooldown.list().find((h) => h.model === "b")!.state).toBe("probing");
    expect(cooldown.list().find((h) => h.model === "a")!.state).toBe("cooling_down");
    expect([...tried.keys()].sort()).toEqual([0, 1, 2]);
  });

  test("past the end of the chain there is none", () => {
    const { cooldown } = setup();
    expect(nextModel({ from: 3, keys, cooldown, tried: new Map() })).toBeNull();
  });
});
