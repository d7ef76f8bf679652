import { fixedToolSet } from "../tool-set.js";
import type { ToolSource } from "../tool-source.js";
import { createHttpTool } from "./http-tool.js";
import { httpToolEntry, type HttpToolEntry } from "./http-tool-entry.js";

/** `TOOLS_FILE`'s `http`: each entry an endpoint that is one tool, fixed from the start. */
export const httpToolSource: ToolSource<HttpToolEntry, "http"> = {
  key: "http",
  fileSchema: httpToolEntry,
  secretsOf: (entry) => [...Object.values(entry.headers), ...(entry.secret ? [entry.secret] : [])],
  claimOf: (entry) => ({ tool: entry.name }),
  programsOf: () => null,
  create: async (entries) => fixedToolSet(entries.map(createHttpTool)),
};
