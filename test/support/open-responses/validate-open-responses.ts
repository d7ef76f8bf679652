import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";

/**
 * Validators of the Open Responses specification's schemas (this folder's
 * openapi.json), with loopd's one extension: the server's tools are OpenAI's
 * remote-MCP items (`mcp_call`, `mcp_approval_request`), which the
 * specification's `ItemField` does not list, so they are added to it here
 * with OpenAI's shapes.
 */
const doc = JSON.parse(readFileSync(path.join(import.meta.dirname, "openapi.json"), "utf8"));
const schemas = doc.components.schemas;
schemas.McpCall = {
  type: "object",
  required: ["type", "id", "server_label", "name", "arguments", "output", "error", "status"],
  properties: {
    type: { enum: ["mcp_call"] },
    id: { type: "string" },
    server_label: { const: "loopd" },
    name: { type: "string" },
    arguments: { type: "string" },
    output: { type: ["string", "null"] },
    error: { type: ["string", "null"] },
    status: { enum: ["in_progress", "completed", "incomplete"] },
  },
};
schemas.McpApprovalRequest = {
  type: "object",
  required: ["type", "id", "server_label", "name", "arguments"],
  properties: {
    type: { enum: ["mcp_approval_request"] },
    id: { type: "string" },
    server_label: { const: "loopd" },
    name: { type: "string" },
    arguments: { type: "string" },
  },
};
schemas.ItemField.oneOf.push(
  { $ref: "#/components/schemas/McpCall" },
  { $ref: "#/components/schemas/McpApprovalRequest" },
);

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ ...doc, $id: "open-responses" });

const compiled = new Map<string, ValidateFunction>();
const validatorOf = (name: string) => {
  let v = compiled.get(name);
  if (!v) {
    v = ajv.compile({ $ref: `open-responses#/components/schemas/${name}` });
    compiled.set(name, v);
  }
  return v;
};

/** Fails the test, naming what is wrong, unless `value` validates as the schema `name`. */
export function expectSchema(name: string, value: unknown): void {
  const validate = validatorOf(name);
  const ok = validate(value);
  expect(
    ok ? [] : ajv.errorsText(validate.errors, { separator: "\n" }).split("\n"),
    `${name}: ${JSON.stringify(value).slice(0, 600)}`,
  ).toEqual([]);
}

/** The schema of a streamed event by its `type`: `response.output_text.delta` → `ResponseOutputTextDeltaStreamingEvent`. */
const EVENT_SCHEMAS: Record<string, string> = Object.fromEntries(
  Object.entries(schemas as Record<string, { properties?: { type?: { enum?: string[] } } }>)
    .filter(([name]) => name.endsWith("StreamingEvent"))
    .flatMap(([name, s]) => (s.properties?.type?.enum ?? []).map((type) => [type, name])),
);

/** Fails unless the event is one of the specification's, valid, with its `sequence_number`. */
export function expectStreamingEvent(event: { type: string; sequence_number: number }): void {
  const name = EVENT_SCHEMAS[event.type];
  expect(name, `an event the specification has: ${event.type}`).toBeDefined();
  expectSchema(name!, event);
}
