import { realpath, stat } from "node:fs/promises";
import path from "node:path";

export interface WorkspacePath {
  /** The real path on disk (symbolic links resolved), inside the workspace. */
  absolutePath: string;
  /** The path as the model should see it: relative to the workspace root, with "/", "." for the root. */
  displayPath: string;
  /** The workspace root's real path. */
  root: string;
}

/**
 * The one gate between a model-supplied path and the disk. Accepts only
 * relative paths that stay inside `workspaceDir`, both as written (`..`) and
 * once symbolic links are resolved, and only paths that exist. Every refusal
 * is an Error whose message the model can act on and that never shows the
 * server's own folders.
 */
export async function resolveInWorkspace({
  workspaceDir,
  path: requested,
}: {
  workspaceDir: string;
  path: string;
}): Promise<WorkspacePath> {
  const root = await workspaceRoot(workspaceDir);
  const wanted = requested.trim() === "" ? "." : requested;
  if (wanted.includes("\0")) throw new Error(`invalid path: ${JSON.stringify(requested)}`);
  if (path.isAbsolute(wanted) || path.win32.isAbsolute(wanted)) {
    throw new Error(
      `path escapes the workspace: ${wanted} (absolute paths are not allowed; use a path relative to the workspace root, such as "notes/todo.md")`,
    );
  }
  const lexical = path.resolve(root, wanted);
  if (!isInside(root, lexical)) throw new Error(`path escapes the workspace: ${wanted}`);
  const displayPath = toDisplayPath(root, lexical);

  let absolutePath: string;
  try {
    absolutePath = await realpath(lexical);
  } catch (error) {
    // Not found: say so of the workspace itself if it is gone.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") await workspaceRoot(workspaceDir, { again: true });
    throw new Error(fsErrorMessage(error, displayPath), { cause: error });
  }
  if (!isInside(root, absolutePath)) {
    throw new Error(`path escapes the workspace: ${wanted} (a symbolic link leads outside the workspace)`);
  }
  return { absolutePath, displayPath, root };
}

/** The workspace-relative, "/"-separated form of an absolute path inside `root`. */
export function toDisplayPath(root: string, absolute: string): string {
  return path.relative(root, absolute).split(path.sep).join("/") || ".";
}

/**
 * Runs a filesystem call and rethrows its failure in words for the model,
 * naming the path as the model knows it rather than the server's path.
 */
export async function explainFsErrors<T>(displayPath: string, fsCall: () => Promise<T>): Promise<T> {
  try {
    return await fsCall();
  } catch (error) {
    throw new Error(fsErrorMessage(error, displayPath), { cause: error });
  }
}

function fsErrorMessage(error: unknown, displayPath: string): string {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "ENOENT":
      return `no such file or folder: ${displayPath} (use list_files to see what exists)`;
    case "ENOTDIR":
      return `not a folder: a part of ${displayPath} is a file`;
    case "EACCES":
    case "EPERM":
      return `permission denied: ${displayPath}`;
    case "ELOOP":
      return `too many symbolic links in ${displayPath}`;
    default:
      return `cannot access ${displayPath}`;
  }
}

/**
 * The workspace folders' real paths, resolved once (two filesystem calls
 * less per tool call): every path is then resolved and checked against the
 * real path found, so nothing outside that folder is reached. A root that
 * is a symbolic link pointed elsewhere while the server runs is followed
 * once a path is not found in the folder it led to (until then the file
 * tools read that folder, while `run_command` already runs in the new one):
 * repoint it with the server stopped. A root found missing is looked for
 * again on the next call.
 */
const roots = new Map<string, Promise<string>>();

async function workspaceRoot(workspaceDir: string, { again = false } = {}): Promise<string> {
  if (again) roots.delete(workspaceDir);
  let root = roots.get(workspaceDir);
  if (!root) {
    root = realDirectory(workspaceDir);
    roots.set(workspaceDir, root);
    root.catch(() => roots.get(workspaceDir) === root && roots.delete(workspaceDir));
  }
  return root;
}

async function realDirectory(workspaceDir: string): Promise<string> {
  try {
    const root = await realpath(workspaceDir);
    if ((await stat(root)).isDirectory()) return root;
  } catch {
    // reported below
  }
  throw new Error("the workspace folder does not exist on the server, so there are no files to work with");
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith(`..${path.sep}`) && relative !== ".." && !path.isAbsolute(relative));
}
