import { readdir } from "node:fs/promises";
import path from "node:path";

/** Folders whose contents are never what a search is after, and are huge. */
const SKIPPED_FOLDERS = new Set(["node_modules", ".git"]);

/**
 * Yields the regular files under `start` (an absolute real path inside the
 * workspace), depth first in name order, so results are stable. Symbolic
 * links are not followed: they could lead out of the workspace or in circles.
 * Unreadable folders are skipped.
 */
export async function* walkWorkspaceFiles(start: string, signal: AbortSignal): AsyncGenerator<string> {
  const stack = [start];
  while (stack.length > 0) {
    signal.throwIfAborted();
    const folder = stack.pop()!;
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subfolders: string[] = [];
    for (const entry of entries) {
      const absolute = path.join(folder, entry.name);
      if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name)) subfolders.push(absolute);
      else if (entry.isFile()) yield absolute;
    }
    // Reversed onto the stack so the first subfolder is walked first.
    stack.push(...subfolders.reverse());
  }
}
