import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { modelAllowed } from "../../src/conversations/ceiling-config.js";
import { checkDefaultModel } from "../../src/conversations/check-model.js";

const PROVIDERS = {
  anthropic: { defaultModel: "claude-sonnet-4-6" },
  openai: { defaultModel: "gpt-5" },
  mock: { defaultModel: "loopd-mock" },
};

describe("the operator's ceilings", () => {
  it("are unset by default: no ceiling, every model, no daily limit", () => {
    expect(loadConfig({}).ceilings).toEqual({
      maxCostUsd: null,
      maxTokens: null,
      maxSeconds: null,
      modelsAllowed: null,
      tenantDailyCostUsd: null,
    });
  });

  it("read positive limits and provider/model patterns, refusing anything else by name", () => {
    const c = loadConfig({
      RUN_MAX_COST_USD_LIMIT: "0.5",
      RUN_MAX_TOKENS_LIMIT: "100000",
      RUN_MAX_SECONDS_LIMIT: "60",
      TENANT_DAILY_COST_USD: "20",
      MODELS_ALLOWED: " anthropic/claude-* , openai/gpt-5*",
    });
    expect(c.ceilings).toEqual({
      maxCostUsd: 0.5,
      maxTokens: 100_000,
      maxSeconds: 60,
      modelsAllowed: ["anthropic/claude-*", "openai/gpt-5*"],
      tenantDailyCostUsd: 20,
    });
    expect(() => loadConfig({ RUN_MAX_TOKENS_LIMIT: "0" })).toThrow(/RUN_MAX_TOKENS_LIMIT/);
    expect(() => loadConfig({ TENANT_DAILY_COST_USD: "-1" })).toThrow(/TENANT_DAILY_COST_USD/);
    expect(() => loadConfig({ MODELS_ALLOWED: "claude-sonnet-4-6" })).toThrow(
      /MODELS_ALLOWED.*provider\/model patterns/,
    );
    expect(() => loadConfig({ MODELS_ALLOWED: "bedrock/claude" })).toThrow(/MODELS_ALLOWED/);
  });

  it("match a pattern on the whole provider/model id, * standing for any run of characters and nothing else being special", () => {
    const allowed = ["anthropic/claude-*", "openai/gpt-5.1"];
    expect(modelAllowed(allowed, "anthropic", "claude-haiku-4-5")).toBe(true);
    expect(modelAllowed(allowed, "openai", "claude-haiku-4-5")).toBe(false);
    expect(modelAllowed(allowed, "openai", "gpt-5.1")).toBe(true);
    expect(modelAllowed(allowed, "openai", "gpt-5x1")).toBe(false);
    expect(modelAllowed(allowed, "openai", "gpt-5.1-pro")).toBe(false);
    expect(modelAllowed(null, "openai", "anything")).toBe(true);
  });

  it("stop start-up when the default model is not allowed, naming it", () => {
    expect(() =>
      checkDefaultModel(loadConfig({ ANTHROPIC_API_KEY: "k", MODELS_ALLOWED: "openai/*" }), PROVIDERS),
    ).toThrow(/default model anthropic\/claude-sonnet-4-6 is not among MODELS_ALLOWED/);
    expect(() =>
      checkDefaultModel(
        loadConfig({
          ANTHROPIC_API_KEY: "k",
          LLM_MODEL: "claude-haiku-4-5",
          MODELS_ALLOWED: "anthropic/claude-haiku-*",
        }),
        PROVIDERS,
      ),
    ).not.toThrow();
  });
});

describe("the mock provider", () => {
  it("is the default without a model key when API keys are off", () => {
    expect(loadConfig({}).models).toMatchObject({ defaultProvider: "mock", mockOffered: true });
  });

  it("is not offered with API keys on, unless MOCK_PROVIDER=true: then no provider is the default without a key", () => {
    expect(loadConfig({ API_KEYS_REQUIRED: "true" }).models).toMatchObject({
      defaultProvider: null,
      mockOffered: false,
    });
    expect(loadConfig({ HOST: "0.0.0.0", ANTHROPIC_API_KEY: "k" }).models).toMatchObject({
      defaultProvider: "anthropic",
      mockOffered: false,
    });
    expect(loadConfig({ API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" }).models).toMatchObject({
      defaultProvider: "mock",
      mockOffered: true,
    });
    expect(() => loadConfig({ API_KEYS_REQUIRED: "true", LLM_PROVIDER: "mock" })).toThrow(
      /LLM_PROVIDER: is mock.*MOCK_PROVIDER=true/,
    );
  });
});
