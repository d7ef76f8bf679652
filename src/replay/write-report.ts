import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { makeDirectory } from "../make-directory.js";

/** Where commands write their reports by default: a folder the repository ignores. */
export const REPORTS_DIR = "reports";

/**
 * Writes a command's JSON report: to `out` when given (replacing a file
 * there, which the caller then says), else to `reports/<name>.json`, or
 * `<name>-2.json`, `-3`, … — a default never overwrites an earlier report.
 */
export function writeReport({ name, out, report, cwd = process.cwd() }: { name: string; out?: string | undefined; report: unknown; cwd?: string }): { file: string; replaced: boolean } {
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (out) {
    const file = path.resolve(cwd, out);
    const replaced = existsSync(file);
    writeFileSync(file, text);
    return { file, replaced };
  }
  const dir = path.resolve(cwd, REPORTS_DIR);
  makeDirectory(dir, "the reports folder");
  for (let n = 1; ; n++) {
    const file = path.join(dir, n === 1 ? `${name}.json` : `${name}-${n}.json`);
    try {
      // wx: two replays of one run at once still get a file each.
      writeFileSync(file, text, { flag: "wx" });
      return { file, replaced: false };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
