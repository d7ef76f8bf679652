import { checkUserSchema } from "../json-schema/check-user-schema.js";
import { ToolErrorResult } from "./define-tool.js";

/**
 * Checks a call's input against a configured tool's JSON Schema (an HTTP
 * entry's `input_schema`, an MCP tool's `inputSchema`) in the schema worker,
 * where a hostile pattern cannot stall the process. Throws the error result
 * the model reads when it does not match. `uncompilable: "skip"` lets the
 * input through when loopd cannot compile the schema (the server checks it).
 */
export async function checkToolInput(
  name: string,
  schema: Record<string, unknown>,
  input: unknown,
  { signal, uncompilable = "refuse" }: { signal: AbortSignal; uncompilable?: "refuse" | "skip" },
): Promise<void> {
  const problems = await checkUserSchema(schema, input, { signal, uncompilable });
  if (problems.length === 0) return;
  const listed = problems.map((p) => `${p.path.length > 0 ? p.path.join(".") : "input"}: ${p.message}`).join("; ");
  throw new ToolErrorResult(`invalid arguments for ${name}: ${listed}. Call it again with input matching its schema.`);
}
