import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { explainFsErrors, resolveInWorkspace } from "../resolve-in-workspace.js";
import { looksBinary } from "./looks-binary.js";
import { openRegularFile } from "./open-regular-file.js";
import { readChunk, readLines, type FileLine } from "./read-lines.js";

export const READ_FILE_DEFAULT_LINES = 2000;
/** Larger files are refused: a model should search them rather than page through them. */
export const READ_FILE_MAX_BYTES = 10 * 1024 * 1024;
/**
 * Up to this size the lines after those returned are counted too, so the
 * note can say "of N"; a larger file is read no further than needed.
 */
const COUNT_LINES_MAX_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 2000;
/** How much of a file's start tells whether it is binary. */
const BINARY_SNIFF_BYTES = 8000;
/**
 * Stop before the executor would clip the result: a clean "continue at line
 * N" beats a result with its middle cut out.
 */
const outputBudget = (maxResultChars: number) => maxResultChars - 300;

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
    execute: async (
      { path, offset = 1, limit = READ_FILE_DEFAULT_LINES },
      { workspaceDir, signal, maxResultChars },
    ) => {
      const { absolutePath, displayPath } = await resolveInWorkspace({ workspaceDir, path });
      const { handle, size } = await openRegularFile(absolutePath, displayPath);
      try {
        if (size > READ_FILE_MAX_BYTES) {
          throw new Error(
            `${displayPath} is too large to read (${size} bytes, limit ${READ_FILE_MAX_BYTES}); use search_files to find the lines you need`,
          );
        }
        // The first chunk, read once: to tell a binary file, then as the first of its lines.
        const first = await explainFsErrors(displayPath, () =>
          readChunk(handle, { position: 0, maxBytes: READ_FILE_MAX_BYTES, size }),
        );
        if (looksBinary(first.bytes.subarray(0, BINARY_SNIFF_BYTES))) {
          throw new Error(`${displayPath} is a binary file (${size} bytes); it cannot be shown as text`);
        }
        const lines = readLines({
          handle,
          first,
          size,
          maxBytes: READ_FILE_MAX_BYTES,
          maxLineChars: MAX_LINE_CHARS,
          signal,
        });
        return await numberedLines({
          lines,
          displayPath,
          size,
          offset,
          limit,
          budgetChars: outputBudget(maxResultChars),
        });
      } finally {
        await handle.close();
      }
    },
  });
}

/** Reads lines only until it has those it returns (and, for a small file, the count of the rest). */
async function numberedLines({
  lines,
  displayPath,
  size,
  offset,
  limit,
  budgetChars,
}: {
  lines: AsyncGenerator<FileLine>;
  displayPath: string;
  size: number;
  offset: number;
  limit: number;
  /** The most characters of lines to return. */
  budgetChars: number;
}): Promise<string> {
  let lineNo = 0;
  const nextLine = async (): Promise<FileLine | undefined> => {
    const next = await lines.next();
    if (next.done) return undefined;
    lineNo++;
    return next.value;
  };

  let line = await nextLine();
  if (line === undefined) return `(${displayPath} is empty)`;
  while (line !== undefined && lineNo < offset) line = await nextLine();
  if (line === undefined) {
    throw new Error(`offset ${offset} is past the end of ${displayPath}, which has ${lineNo} lines`);
  }

  const out: string[] = [];
  let chars = 0;
  while (line !== undefined && lineNo < offset + limit) {
    const text = line.length > MAX_LINE_CHARS ? `${line.text}… [line clipped: ${line.length} characters]` : line.text;
    const numbered = `${lineNo}\t${text}`;
    if (out.length > 0 && chars + numbered.length + 1 > budgetChars) break;
    out.push(numbered);
    chars += numbered.length + 1;
    line = await nextLine();
  }
  if (line !== undefined) {
    // `line` is the first one not shown.
    const next = lineNo;
    let shown = `lines ${offset}-${next - 1} shown, more follow (the file has ${size} bytes)`;
    if (size <= COUNT_LINES_MAX_BYTES) {
      while (line !== undefined) line = await nextLine();
      shown = `lines ${offset}-${next - 1} of ${lineNo} shown`;
    }
    out.push(`[${shown}; call read_file with offset ${next} to read on]`);
  }
  return out.join("\n");
}
