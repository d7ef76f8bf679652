import { stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { explainFsErrors, resolveInWorkspace, toDisplayPath } from "../resolve-in-workspace.js";
import { looksBinary } from "./looks-binary.js";
import { openRegularFile } from "./open-regular-file.js";
import { createRegexLineMatcher, type LineMatch, type LineMatcher } from "./regex-line-matcher.js";
import { walkWorkspaceFiles } from "./walk-workspace-files.js";

export const SEARCH_MAX_MATCHES = 200;
export const SEARCH_MAX_FILES = 5000;
/** Larger files are skipped (and counted), so one log cannot eat the time budget. */
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024;
const MAX_SHOWN_LINE_CHARS = 300;
/** A regular expression sees only this much of a line, which bounds an ordinary slow pattern. */
const MAX_TESTED_LINE_CHARS = 10_000;

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
      const parsed = parsePattern(pattern);
      const { absolutePath, displayPath, root } = await resolveInWorkspace({ workspaceDir, path: requested });
      const info = await explainFsErrors(displayPath, () => stat(absolutePath));
      const inFolder = info.isDirectory();
      const files = inFolder ? walkWorkspaceFiles(absolutePath, signal) : single(absolutePath);

      const found: string[] = [];
      const notes: string[] = [];
      let searched = 0;
      let tooLarge = 0;
      const matcher = matcherFor(parsed, signal);
      try {
        for await (const file of files) {
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
          // One past the cap, to know whether to say the list was cut.
          for (const match of await matcher.matchLines(content.text, SEARCH_MAX_MATCHES + 1 - found.length)) {
            found.push(`${toDisplayPath(root, file)}:${match.line}: ${shown(match.text)}`);
          }
          if (found.length > SEARCH_MAX_MATCHES) break;
        }
      } finally {
        await matcher.close();
      }

      if (found.length > SEARCH_MAX_MATCHES) {
        found.length = SEARCH_MAX_MATCHES;
        notes.unshift(`[stopped at ${SEARCH_MAX_MATCHES} matches; narrow the pattern or the path]`);
      }
      if (tooLarge > 0) notes.push(`[skipped ${tooLarge} files over ${SEARCH_MAX_FILE_BYTES} bytes]`);
      if (found.length === 0) {
        return [`no matches for ${JSON.stringify(pattern)} in ${searched} files under ${displayPath}`, ...notes].join(
          "\n",
        );
      }
      return [...found, ...notes].join("\n");
    },
  });
}

type Pattern = { kind: "literal"; text: string } | { kind: "regex"; source: string; flags: string };

/** `/…/flags` is a regular expression, anything else a literal substring. */
function parsePattern(pattern: string): Pattern {
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (regex === null) return { kind: "literal", text: pattern };
  // g and y make test() stateful across lines; they mean nothing here.
  const [source, flags] = [regex[1]!, regex[2]!.replace(/[gy]/g, "")];
  try {
    // Compiled here only to report a bad one at once, in words the model can act on.
    new RegExp(source, flags);
  } catch (error) {
    throw new Error(`invalid regular expression ${pattern}: ${(error as Error).message}`, { cause: error });
  }
  return { kind: "regex", source, flags };
}

/**
 * A literal substring is found on this thread: `includes` cannot stall. A
 * regular expression is matched in a worker that the tool's signal
 * terminates, since a catastrophically backtracking one would otherwise
 * freeze the whole process past the tool's timeout.
 */
function matcherFor(pattern: Pattern, signal: AbortSignal): LineMatcher {
  if (pattern.kind === "regex") {
    return createRegexLineMatcher({
      source: pattern.source,
      flags: pattern.flags,
      maxLineChars: MAX_TESTED_LINE_CHARS,
      signal,
    });
  }
  return {
    matchLines: async (text, limit) => {
      const found: LineMatch[] = [];
      for (const [i, line] of text.split(/\r?\n/).entries()) {
        if (found.length === limit) break;
        if (line.includes(pattern.text)) found.push({ line: i + 1, text: line });
      }
      return found;
    },
    close: async () => {},
  };
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
