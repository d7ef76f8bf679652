import type { ToolSpec } from "../core/model-provider.js";
import type { ClientTool } from "../store/schema.js";

/** A conversation's client tools as the model is told about them. */
export const clientToolSpecs = (tools: readonly ClientTool[]): ToolSpec[] => tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema }));
