import type { z } from "zod";
import { fieldPath } from "../util/field-path.js";

/**
 * Every error text the executor sends back to the model, in one place. Each
 * says what went wrong and what to do instead, because the model reads it and
 * decides its next step from it.
 */

export function unknownToolMessage(name: string, available: string[]): string {
  const choices =
    available.length === 0
      ? "No tools are available in this conversation."
      : `Available tools: ${available.join(", ")}.`;
  return `Unknown tool ${JSON.stringify(name)}. ${choices}`;
}

/** `raw` is what the model sent instead of a JSON object. */
export function invalidJsonMessage(name: string, raw: string): string {
  let problem: string;
  try {
    const value: unknown = JSON.parse(raw);
    problem = `they must be a JSON object, got ${describeJsonType(value)}`;
  } catch (error) {
    problem = `they are not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  return `Invalid arguments for ${name}: ${problem}. Send the arguments as a JSON object matching the tool's input schema.`;
}

/**
 * One line per failing field: its path, what was expected and what was
 * received, e.g. `Invalid arguments for calculate: expression: expected string, received number`.
 */
export function invalidArgumentsMessage(name: string, issues: z.core.$ZodIssue[], input: unknown): string {
  const lines = issues.map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue, valueAt(input, issue.path))}`);
  return `Invalid arguments for ${name}: ${lines.join("; ")}`;
}

/** The error's type and message; never the stack, which only helps us. */
export function thrownMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `the tool failed with a non-Error value: ${safeJson(error)}`;
}

export function timeoutMessage(name: string, timeoutMs: number): string {
  return `${name} timed out after ${formatSeconds(timeoutMs)} s; try a narrower request.`;
}

export function cancelledMessage(started: boolean): string {
  return started
    ? "The tool call was cancelled before it finished: the run was cancelled."
    : "The tool call was cancelled before it started: the run was cancelled.";
}

/** 30000 → "30", 1500 → "1.5", 50 → "0.05". */
export function formatSeconds(ms: number): string {
  return String(Number((ms / 1000).toFixed(3)));
}

const formatPath = (path: PropertyKey[]): string => (path.length === 0 ? "(arguments)" : fieldPath(path));

function describeIssue(issue: z.core.$ZodIssue, received: unknown): string {
  // zod's messages already say what was expected ("Invalid input: expected
  // string, received number"); drop the generic prefix and add what was
  // received where zod leaves it out.
  const message = issue.message.replace(/^Invalid (input|option): /, "");
  if (issue.code === "invalid_type" || issue.code === "unrecognized_keys" || received === undefined) return message;
  return `${message}, received ${safeJson(received)}`;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function safeJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
