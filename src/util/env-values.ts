import { z } from "zod";

/** Unset, empty or only spaces: the default (`Number(" ")` would be 0). */
export const blank = (v: unknown) => v === undefined || (typeof v === "string" && v.trim() === "");

/** A string, unset when empty. */
export const optionalString = z.preprocess((v) => (v === "" ? undefined : v), z.string().optional());

/** A whole number from the environment; `min: 0` where 0 means "off". */
export const intFromEnv = (
  fallback: number,
  { min = 1, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
) => z.preprocess((v) => (blank(v) ? undefined : Number(v)), z.number().int().min(min).max(max).default(fallback));

/** `true` or `false`, unset (or empty) being `fallback`. */
export const booleanFromEnv = (fallback: "true" | "false") =>
  z.preprocess((v) => (blank(v) ? undefined : v), z.enum(["true", "false"]).default(fallback));

/** An http(s) URL, unset when empty. */
export const optionalUrl = z.preprocess((v) => (v === "" ? undefined : v), z.url({ protocol: /^https?$/ }).optional());
