import { z } from "zod";
import { MAX_TOOL_RESULT_CHARS } from "../clip-tool-result.js";
import { defineTool } from "../define-tool.js";
import { explainFsErrors, resolveInWorkspace } from "../resolve-in-workspace.js";
import { looksBinary } from "./looks-binary.js";
import { openRegularFile } from "./open-regular-file.js";

export const READ_FILE_DEFAULT_LINES = 2000;
/** Larger files are refused rather than read whole into memory. */
export const READ_FILE_MAX_BYTES = 10 * 1024 * 1024;
const MAX_LINE_CHARS = 2000;
/**
 * Stop before the executor would clip the result: a clean "continue at line
 * N" beats a result with its middle cut out.
 */
const OUTPUT_BUDGET_CHARS = MAX_TOOL_RESULT_CHARS - 300;

export function createReadFileTool() {
  return defineTool({
    name: "read_file",
    description:
      "Read a text file in the workspace. Returns its lines prefixed with their line numbers and a tab. " +
      `Reads up to ${READ_FILE_DEFAULT_LINES} lines (fewer when they are long); use offset to read on.`,
    input: z.object({
      path: z.string().describe('Path relative to the workspace root, e.g. "notes/todo.md"'),
      offset: z.number().int().min(1).optional().describe("Line number to start at (1-based). Default 1"),
      limit: z
        .number()
        .int()
        .min(1)
        .max(READ_FILE_DEFAULT_LINES)
        .optional()
        .describe(`How many lines to read. Default ${READ_FILE_DEFAULT_LINES}`),
    }),
    readOnly: true,
    execute: async ({ path, offset = 1, limit = READ_FILE_DEFAULT_LINES }, { workspaceDir }) => {
      const { absolutePath, displayPath } = await resolveInWorkspace({ workspaceDir, path });
      const bytes = await readBounded(absolutePath, displayPath);
      if (looksBinary(bytes)) {
        throw new Error(`${displayPath} is a binary file (${bytes.length} bytes); it cannot be shown as text`);
      }
      return numberedLines({ text: bytes.toString("utf8"), displayPath, offset, limit });
    },
  });
}

async function readBounded(absolutePath: string, displayPath: string): Promise<Buffer> {
  const { handle, size } = await openRegularFile(absolutePath, displayPath);
  try {
    if (size > READ_FILE_MAX_BYTES) {
      throw new Error(
        `${displayPath} is too large to read (${size} bytes, limit ${READ_FILE_MAX_BYTES}); use search_files to find the lines you need`,
      );
    }
    return await explainFsErrors(displayPath, () => handle.readFile());
  } finally {
    await handle.close();
  }
}

function numberedLines({
  text,
  displayPath,
  offset,
  limit,
}: {
  text: string;
  displayPath: string;
  offset: number;
  limit: number;
}): string {
  if (text === "") return `(${displayPath} is empty)`;
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop(); // the newline that ends the last line
  if (offset > lines.length) {
    throw new Error(`offset ${offset} is past the end of ${displayPath}, which has ${lines.length} lines`);
  }
  const out: string[] = [];
  let size = 0;
  let lineNo = offset;
  for (; lineNo < offset + limit && lineNo <= lines.length; lineNo++) {
    let line = lines[lineNo - 1]!;
    if (line.length > MAX_LINE_CHARS) {
      line = `${line.slice(0, MAX_LINE_CHARS)}… [line clipped: ${line.length} characters]`;
    }
    const numbered = `${lineNo}\t${line}`;
    if (out.length > 0 && size + numbered.length + 1 > OUTPUT_BUDGET_CHARS) break;
    out.push(numbered);
    size += numbered.length + 1;
  }
  if (lineNo <= lines.length) {
    out.push(
      `[lines ${offset}-${lineNo - 1} of ${lines.length} shown; call read_file with offset ${lineNo} to read on]`,
    );
  }
  return out.join("\n");
}
