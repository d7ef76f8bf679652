import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { explainFsErrors } from "../resolve-in-workspace.js";

export interface OpenedFile {
  handle: FileHandle;
  /** From fstat on the open descriptor: the size of the file being read. */
  size: number;
}

/**
 * Opens a workspace file for reading, and only a regular file; the caller
 * closes the handle. `absolutePath` is a real path from `resolveInWorkspace`.
 *
 * - O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer,
 *   holding one of libuv's four threadpool threads for good; four such calls
 *   stall every fs call and DNS lookup of the process. For a regular file it
 *   changes nothing.
 * - O_NOFOLLOW: the path was resolved already, so a symbolic link found here
 *   was put in its place since; it is refused rather than followed.
 * - The type and size come from fstat on the opened descriptor, so they are
 *   those of the file read, not of whatever had the name a moment earlier.
 */
export async function openRegularFile(absolutePath: string, displayPath: string): Promise<OpenedFile> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
  const handle = await explainFsErrors(displayPath, () => open(absolutePath, flags));
  try {
    const info = await explainFsErrors(displayPath, () => handle.stat());
    if (info.isDirectory()) throw new Error(`${displayPath} is a folder; use list_files to see what it holds`);
    if (!info.isFile())
      throw new Error(`${displayPath} is not a regular file (${kindOf(info)}); only regular files can be read`);
    return { handle, size: info.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function kindOf(info: Stats): string {
  if (info.isFIFO()) return "it is a named pipe";
  if (info.isSocket()) return "it is a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "it is a device";
  return "it is a special file";
}
