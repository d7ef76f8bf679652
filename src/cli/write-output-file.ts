import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { makeDirectory } from "../util/make-directory.js";

/** Where commands write their reports and exports by default: a folder the repository ignores. */
export const REPORTS_DIR = "reports";

/**
 * Writes a command's output file (a replay's report, an export): to `out`
 * when given (replacing a file there, which the caller then says), else to
 * `reports/<name>.<extension>`, or `<name>-2.<extension>`, `-3`, … — a
 * default never overwrites an earlier file.
 */
export function writeOutputFile({
  name,
  extension,
  out,
  text,
  cwd = process.cwd(),
}: {
  name: string;
  extension: string;
  out?: string | undefined;
  text: string;
  cwd?: string;
}): { file: string; replaced: boolean } {
  if (out) {
    const file = path.resolve(cwd, out);
    const replaced = existsSync(file);
    makeDirectory(path.dirname(file), "the output's folder");
    writeFileSync(file, text);
    return { file, replaced };
  }
  // A name is made of what it was given (a run id, a date): never a path out of the folder.
  name = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  const dir = path.resolve(cwd, REPORTS_DIR);
  makeDirectory(dir, "the reports folder");
  for (let n = 1; ; n++) {
    const file = path.join(dir, n === 1 ? `${name}.${extension}` : `${name}-${n}.${extension}`);
    try {
      // wx: two commands at once still get a file each.
      writeFileSync(file, text, { flag: "wx" });
      return { file, replaced: false };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
