import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { Usage } from "../../../src/core/usage.js";
import { createPriceTable, DEFAULT_PRICES } from "../../../src/providers/prices/price-table.js";
import { loadPriceFile } from "../../../src/providers/prices/prices-file.js";

const usage = (u: Partial<Usage>): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  ...u,
});

describe("priceOf", () => {
  const table = createPriceTable();

  test("finds an exact key", () => {
    expect(table.priceOf("gpt-4o")).toEqual({ input: 2.5, output: 10, cache_read: 1.25, cache_write: 2.5 });
    expect(table.priceOf("loopd-mock")).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0 });
  });

  test("finds a dated model id by its undated key", () => {
    expect(table.priceOf("claude-sonnet-4-5-20250929")).toBe(DEFAULT_PRICES["claude-sonnet-4-5"]);
    expect(table.priceOf("claude-opus-4-1-20250805")).toBe(DEFAULT_PRICES["claude-opus-4-1"]);
    expect(table.priceOf("claude-opus-4-20250514")).toBe(DEFAULT_PRICES["claude-opus-4"]);
    expect(table.priceOf("gpt-4o-2024-08-06")).toBe(DEFAULT_PRICES["gpt-4o"]);
  });

  test("prefers the longest matching key, so a mini is not priced as its big sibling", () => {
    expect(table.priceOf("gpt-4o-mini-2024-07-18")).toBe(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(table.priceOf("gpt-4.1-nano-2025-04-14")).toBe(DEFAULT_PRICES["gpt-4.1-nano"]);
    expect(table.priceOf("claude-opus-4-5-20251101")?.input).toBe(5);
  });

  test("every built-in row is found by its own id and its dated ids, never shadowed by a shorter key", () => {
    for (const [key, row] of Object.entries(DEFAULT_PRICES)) {
      for (const id of [key, `${key}-2025-06-01`, `${key}-20250601`]) expect(table.priceOf(id), id).toBe(row);
    }
  });

  test("variants dearer than their family have rows of their own, not the family's price", () => {
    const dearer = {
      "o3-pro": "o3",
      "gpt-5-pro": "gpt-5",
      "o1-pro": "o1",
      "o3-deep-research": "o3",
      "o4-mini-deep-research": "o4-mini",
    };
    for (const [variant, family] of Object.entries(dearer)) {
      expect(table.priceOf(`${variant}-2025-06-10`)!.output, variant).toBeGreaterThan(DEFAULT_PRICES[family]!.output);
    }
    expect(table.priceOf("o3-pro")).toEqual({ input: 20, output: 80, cache_read: 20, cache_write: 20 });
    expect(table.priceOf("gpt-5-pro")).toEqual({ input: 15, output: 120, cache_read: 15, cache_write: 15 });
  });

  test("matches a key only at a `-` boundary", () => {
    // `gpt-4o` is a string prefix of `gpt-4omni`, and `gpt-5` of `gpt-5.1`, but neither is the same model.
    expect(table.priceOf("gpt-4omni")).toBeNull();
    expect(table.priceOf("gpt-5.1")).toBeNull();
  });

  test("returns null for a model with no price", () => {
    expect(table.priceOf("llama-3-70b")).toBeNull();
    expect(table.priceOf("")).toBeNull();
    expect(table.costOf("llama-3-70b", usage({ input_tokens: 1000 }))).toBeNull();
  });
});

describe("costOf", () => {
  const table = createPriceTable();

  test("bills Anthropic cache reads and writes apart from uncached input", () => {
    // claude-sonnet-4-5: 3 in, 15 out, 0.30 cache read, 3.75 cache write per million.
    // 2000*3 + 500*15 + 10000*0.3 + 4000*3.75 = 6000 + 7500 + 3000 + 15000 = 31500 per million.
    const cost = table.costOf(
      "claude-sonnet-4-5-20250929",
      usage({ input_tokens: 2000, output_tokens: 500, cache_read_tokens: 10_000, cache_write_tokens: 4000 }),
    );
    expect(cost).toBe(0.0315);
  });

  test("bills OpenAI cached input at the cached rate, once", () => {
    // loopd stores prompt_tokens 5000 with cached_tokens 3000 as input 2000 + cache read 3000.
    // gpt-4o: 2000*2.5 + 800*10 + 3000*1.25 = 5000 + 8000 + 3750 = 16750 per million.
    const cost = table.costOf(
      "gpt-4o-2024-08-06",
      usage({ input_tokens: 2000, output_tokens: 800, cache_read_tokens: 3000 }),
    );
    expect(cost).toBe(0.01675);
  });

  test("costs nothing for the mock model and for no tokens", () => {
    expect(table.costOf("loopd-mock", usage({ input_tokens: 12_345, output_tokens: 678 }))).toBe(0);
    expect(table.costOf("gpt-5", usage({}))).toBe(0);
  });

  test("rounds away float noise, to 1e-9 USD", () => {
    // gpt-4o-mini: (4*0.15 + 1*0.075) / 1e6 is 6.749999999999999e-7 in binary floating point.
    expect(table.costOf("gpt-4o-mini", usage({ input_tokens: 4, cache_read_tokens: 1 }))).toBe(6.75e-7);
    // (0.1 + 0.2) / 1e6 is 3.0000000000000004e-7.
    const tenths = createPriceTable({ tenths: { input: 0.1, output: 0.2, cache_read: 0, cache_write: 0 } });
    expect(tenths.costOf("tenths", usage({ input_tokens: 1, output_tokens: 1 }))).toBe(3e-7);
    // Below 1e-9 USD is dropped: one token at $1/3 per million is 3.333…e-7.
    const third = createPriceTable({ third: { input: 1 / 3, output: 0, cache_read: 0, cache_write: 0 } });
    expect(third.costOf("third", usage({ input_tokens: 1 }))).toBe(3.33e-7);
  });
});

describe("overrides", () => {
  const cheap = { input: 1, output: 2, cache_read: 0.1, cache_write: 1 };

  test("an override replaces the default of the same key, dated ids included", () => {
    const table = createPriceTable({ "gpt-4o": cheap });
    expect(table.priceOf("gpt-4o")).toEqual(cheap);
    expect(table.priceOf("gpt-4o-2024-08-06")).toEqual(cheap);
    expect(table.priceOf("gpt-4o-mini")).toBe(DEFAULT_PRICES["gpt-4o-mini"]);
  });

  test("an override can price a model the defaults do not know, and a longer override key wins", () => {
    const table = createPriceTable({ "my-model": cheap, "claude-sonnet-4-5-20250929": cheap });
    expect(table.priceOf("my-model-v2")).toEqual(cheap);
    expect(table.priceOf("claude-sonnet-4-5-20250929")).toEqual(cheap);
    expect(table.priceOf("claude-sonnet-4-5")).toBe(DEFAULT_PRICES["claude-sonnet-4-5"]);
  });

  test("does not change the defaults", () => {
    createPriceTable({ "gpt-4o": cheap });
    expect(createPriceTable().priceOf("gpt-4o")?.input).toBe(2.5);
  });
});

describe("loadPriceFile", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "loopd-prices-"));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  test("reads prices, defaulting the cache prices to the input price", () => {
    const file = write(
      "good.json",
      JSON.stringify({
        "gpt-4o": { input: 2, output: 8, cache_read: 1 },
        "local-model": { input: 0, output: 0 },
        "claude-x": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
      }),
    );
    const prices = loadPriceFile(file);
    expect(prices).toEqual({
      "gpt-4o": { input: 2, output: 8, cache_read: 1, cache_write: 2 },
      "local-model": { input: 0, output: 0, cache_read: 0, cache_write: 0 },
      "claude-x": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
    });
    expect(createPriceTable(prices).priceOf("gpt-4o-2024-08-06")?.input).toBe(2);
  });

  test("names the file when it cannot be read", () => {
    const file = path.join(dir, "missing.json");
    expect(() => loadPriceFile(file)).toThrow(`PRICES_FILE ${file}: cannot be read`);
  });

  test("names the file when it is not JSON", () => {
    const file = write("bad.json", "{ gpt-4o: 1 ");
    expect(() => loadPriceFile(file)).toThrow(`PRICES_FILE ${file}: is not valid JSON`);
  });

  test("names the model and field of a negative price", () => {
    const file = write("negative.json", JSON.stringify({ "gpt-4o": { input: 2, output: -1 } }));
    expect(() => loadPriceFile(file)).toThrow(`PRICES_FILE ${file}: "gpt-4o".output: must be a non-negative number`);
  });

  test("names the model and field of a missing output price", () => {
    const file = write("missing-output.json", JSON.stringify({ "claude-x": { input: 3 } }));
    expect(() => loadPriceFile(file)).toThrow(`PRICES_FILE ${file}: "claude-x".output: is required`);
  });

  test("rejects a price that is not a finite number", () => {
    const asString = write("string.json", JSON.stringify({ m: { input: "2", output: 8 } }));
    expect(() => loadPriceFile(asString)).toThrow(`"m".input: must be a non-negative number`);
    const infinite = write("infinite.json", '{ "m": { "input": 1e999, "output": 8 } }');
    expect(() => loadPriceFile(infinite)).toThrow(`"m".input: must be a non-negative number`);
  });

  test("rejects a misspelt field rather than defaulting it", () => {
    const file = write("typo.json", JSON.stringify({ m: { input: 2, output: 8, cache_reads: 1 } }));
    expect(() => loadPriceFile(file)).toThrow(/"m": Unrecognized key.*cache_reads/);
  });

  test("rejects a file that is not an object of prices", () => {
    const file = write("array.json", "[]");
    expect(() => loadPriceFile(file)).toThrow(`PRICES_FILE ${file}: must be a JSON object of model id`);
  });
});
