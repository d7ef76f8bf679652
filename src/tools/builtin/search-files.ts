import { stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { explainFsErrors, resolveInWorkspace, toDisplayPath } from "../resolve-in-workspace.js";
import { looksBinary } from "./looks-binary.js";
import { openRegularFile } from "./open-regular-file.js";
import { walkWorkspaceFiles } from "./walk-workspace-files.js";

export const SEARCH_MAX_MATCHES = 200;
export const SEARCH_MAX_FILES = 5000;
/** Larger files are skipped (and counted), so one log cannot eat the time budget. */
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024;
const MAX_SHOWN_LINE_CHARS = 300;

export function createSearchFilesTool() {
  return defineTool({
    name: "search_files",
    description:
      "Search the text files of the workspace for a pattern, line by line. The pattern is a case-sensitive " +
      "literal substring; write it as /regex/ (flags allowed, e.g. /todo/i) for a JavaScript regular expression. " +
      `Returns one "path:line: text" per match, at most ${SEARCH_MAX_MATCHES}. ` +
      "Skips node_modules, .git, binary files and symbolic links.",
    input: z.object({
      pattern: z.string().min(1).max(500).describe('Text to find, or /regex/flags, e.g. "TODO" or "/fn\\s+\\w+/"'),
      path: z.string().default(".").describe('File or folder to search, relative to the workspace root; default "."'),
    }),
    readOnly: true,
    execute: async ({ pattern, path: requested }, { workspaceDir, signal }) => {
      const matches = lineMatcher(pattern);
      const { absolutePath, displayPath, root } = await resolveInWorkspace({ workspaceDir, path: requested });
      const info = await explainFsErrors(displayPath, () => stat(absolutePath));
      const inFolder = info.isDirectory();
      const files = inFolder ? walkWorkspaceFiles(absolutePath, signal) : single(absolutePath);

      const found: string[] = [];
      const notes: string[] = [];
      let searched = 0;
      let tooLarge = 0;
      search: for await (const file of files) {
        signal.throwIfAborted();
        if (searched === SEARCH_MAX_FILES) {
          notes.push(`[stopped after ${SEARCH_MAX_FILES} files; search a subfolder to cover the rest]`);
          break;
        }
        searched++;
        let content: FileContent;
        try {
          content = await readText(file, toDisplayPath(root, file));
        } catch (error) {
          // In a folder, a file that cannot be read is skipped; asked for by
          // name, the model learns why (not a regular file, permission denied).
          if (!inFolder) throw error;
          continue;
        }
        if (content.kind === "too large") tooLarge++;
        if (content.kind !== "text") continue;
        const lines = content.text.split(/\r?\n/);
        for (const [i, line] of lines.entries()) {
          if (!matches(line)) continue;
          found.push(`${toDisplayPath(root, file)}:${i + 1}: ${shown(line)}`);
          // One past the cap, to know whether to say the list was cut.
          if (found.length > SEARCH_MAX_MATCHES) break search;
        }
      }

      if (found.length > SEARCH_MAX_MATCHES) {
        found.length = SEARCH_MAX_MATCHES;
        notes.unshift(`[stopped at ${SEARCH_MAX_MATCHES} matches; narrow the pattern or the path]`);
      }
      if (tooLarge > 0) notes.push(`[skipped ${tooLarge} files over ${SEARCH_MAX_FILE_BYTES} bytes]`);
      if (found.length === 0) {
        return [`no matches for ${JSON.stringify(pattern)} in ${searched} files under ${displayPath}`, ...notes].join("\n");
      }
      return [...found, ...notes].join("\n");
    },
  });
}

/**
 * `/…/flags` is a regular expression, anything else a literal substring.
 * Regular expressions run on this thread: clipping long lines bounds a slow
 * pattern, but a catastrophically backtracking one (/(a+)+b/) can still stall
 * the process past the tool's timeout. Moving matching to a worker that the
 * timeout can terminate would close that.
 */
function lineMatcher(pattern: string): (line: string) => boolean {
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (regex === null) return (line) => line.includes(pattern);
  let compiled: RegExp;
  try {
    // g and y make test() stateful across lines; they mean nothing here.
    compiled = new RegExp(regex[1]!, regex[2]!.replace(/[gy]/g, ""));
  } catch (error) {
    throw new Error(`invalid regular expression ${pattern}: ${(error as Error).message}`, { cause: error });
  }
  return (line) => compiled.test(line.length > 10_000 ? line.slice(0, 10_000) : line);
}

type FileContent = { kind: "text"; text: string } | { kind: "too large" | "binary" };

async function readText(file: string, displayPath: string): Promise<FileContent> {
  const { handle, size } = await openRegularFile(file, displayPath);
  try {
    if (size > SEARCH_MAX_FILE_BYTES) return { kind: "too large" };
    // No more than the size fstat gave, however much a file grows meanwhile.
    const bytes = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const read = bytes.subarray(0, filled);
    return looksBinary(read) ? { kind: "binary" } : { kind: "text", text: read.toString("utf8") };
  } finally {
    await handle.close();
  }
}

async function* single(file: string): AsyncGenerator<string> {
  yield file;
}

function shown(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > MAX_SHOWN_LINE_CHARS ? `${trimmed.slice(0, MAX_SHOWN_LINE_CHARS)}…` : trimmed;
}
