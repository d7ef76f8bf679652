import { readFileSync } from "node:fs";
import { z } from "zod";
import { createPriceTable, type ModelPrice, type PriceTable } from "./price-table.js";
import { OperatorError } from "../../errors.js";

const NOT_A_PRICE = "must be a non-negative number";
const amount = z
  .number({ error: (issue) => (issue.input === undefined ? "is required" : NOT_A_PRICE) })
  .min(0, NOT_A_PRICE);

// Strict, so a misspelt `cache_reads` is an error rather than a silent fallback to the input price.
const priceFileSchema = z.record(
  z.string().min(1, "a model id must not be empty"),
  z
    .strictObject({ input: amount, output: amount, cache_read: amount.optional(), cache_write: amount.optional() })
    .transform((p): ModelPrice => ({
      input: p.input,
      output: p.output,
      cache_read: p.cache_read ?? p.input,
      cache_write: p.cache_write ?? p.input,
    })),
  { error: "must be a JSON object of model id → { input, output, cache_read?, cache_write? }" },
);

/**
 * Reads a `PRICES_FILE`: a JSON object of model id → USD per million tokens,
 * `{ input, output, cache_read?, cache_write? }`, the cache prices defaulting
 * to the input price. Meant to run at start, so a bad file stops loopd with an
 * error naming the file and what is wrong in it.
 */
export function loadPriceFile(file: string): Record<string, ModelPrice> {
  const fail = (problem: string) => new OperatorError(`PRICES_FILE ${file}: ${problem}`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw fail(`cannot be read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw fail(`is not valid JSON (${(err as Error).message})`);
  }
  const parsed = priceFileSchema.safeParse(json);
  if (!parsed.success) {
    throw fail(parsed.error.issues.map((i) => `${where(i.path)}${i.message}`).join("; "));
  }
  return parsed.data;
}

/** `"gpt-4o".output: ` for a path into the file; nothing for the file as a whole. */
function where(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "";
  const [model, ...fields] = path;
  return `${[JSON.stringify(String(model)), ...fields.map(String)].join(".")}: `;
}

/** The price table a configuration names: the built-in prices, with `PRICES_FILE` over them. */
export const pricesOf = ({ pricesFile }: { pricesFile: string | undefined }): PriceTable =>
  createPriceTable(pricesFile ? loadPriceFile(pricesFile) : {});
