import type { Tool } from "../define-tool.js";
import { createCalculateTool } from "./calculate.js";
import { createGetCurrentTimeTool } from "./get-current-time.js";
import { createListFilesTool } from "./list-files.js";
import { createReadFileTool } from "./read-file.js";
import { createSearchFilesTool } from "./search-files.js";

export {
  createCalculateTool,
  createGetCurrentTimeTool,
  createListFilesTool,
  createReadFileTool,
  createSearchFilesTool,
};

/** loopd's built-in tools, all read-only, in the order the API contract lists them. */
export function createBuiltinTools({
  now,
}: {
  /** Clock for get_current_time. @default () => new Date() */
  now?: () => Date;
} = {}): Tool[] {
  return [
    createGetCurrentTimeTool({ now }),
    createCalculateTool(),
    createReadFileTool(),
    createListFilesTool(),
    createSearchFilesTool(),
  ];
}
