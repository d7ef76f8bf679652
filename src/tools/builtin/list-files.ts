import { lstat, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { explainFsErrors, resolveInWorkspace } from "../resolve-in-workspace.js";

export const LIST_FILES_MAX_ENTRIES = 1000;

export interface ListedEntry {
  /** Folders end with "/". */
  name: string;
  type: "directory" | "file" | "symlink" | "other";
  /** Bytes, for files only. */
  size?: number;
}

export function createListFilesTool() {
  return defineTool({
    name: "list_files",
    description:
      "List one folder of the workspace (not recursive): each entry's name (folders end with /), type and, " +
      "for files, size in bytes. Folders come first, then files, each sorted by name.",
    input: z.object({
      path: z.string().default(".").describe('Folder relative to the workspace root; "." (the default) is the root'),
    }),
    readOnly: true,
    execute: async ({ path: requested }, { workspaceDir, signal }) => {
      const { absolutePath, displayPath } = await resolveInWorkspace({ workspaceDir, path: requested });
      const info = await explainFsErrors(displayPath, () => stat(absolutePath));
      if (info.isFile()) throw new Error(`${displayPath} is a file, not a folder; use read_file to read it`);
      if (!info.isDirectory()) throw new Error(`${displayPath} is not a folder (nor a regular file)`);
      const names = await explainFsErrors(displayPath, () => readdir(absolutePath));

      const entries: ListedEntry[] = [];
      for (const name of names) {
        signal.throwIfAborted();
        entries.push(await describeEntry(path.join(absolutePath, name), name));
      }
      entries.sort(byFoldersThenName);
      const shown = entries.slice(0, LIST_FILES_MAX_ENTRIES);
      return {
        path: displayPath,
        entries: shown,
        ...(shown.length < entries.length && {
          note: `showing the first ${shown.length} of ${entries.length} entries; list a subfolder or use search_files`,
        }),
      };
    },
  });
}

async function describeEntry(absolute: string, name: string): Promise<ListedEntry> {
  try {
    // lstat: a symbolic link is reported as one, never followed out of the workspace.
    const info = await lstat(absolute);
    if (info.isDirectory()) return { name: `${name}/`, type: "directory" };
    if (info.isFile()) return { name, type: "file", size: info.size };
    if (info.isSymbolicLink()) return { name, type: "symlink" };
  } catch {
    // Vanished or unreadable since readdir: still list it.
  }
  return { name, type: "other" };
}

function byFoldersThenName(a: ListedEntry, b: ListedEntry): number {
  const folderFirst = Number(b.type === "directory") - Number(a.type === "directory");
  if (folderFirst !== 0) return folderFirst;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
