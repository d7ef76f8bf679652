// `npm start` builds only when a source is newer than the last build, so a
// restart takes about a second instead of a whole `tsc` run.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const stamp = path.join(root, "dist", "main.js");

function newest(entry) {
  const info = statSync(entry);
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newest(path.join(entry, name))), info.mtimeMs);
}

const inputs = ["src", "tsconfig.json", "tsconfig.build.json", "package.json"].map((p) => path.join(root, p));
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (inputs.some((p) => existsSync(p) && newest(p) > built)) {
  process.stdout.write("building (sources changed since the last build)…\n");
  execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(root, "tsconfig.build.json")], {
    stdio: "inherit",
  });
  // tsc leaves an unchanged file as it was: mark the build as newer than every source.
  const now = new Date();
  utimesSync(stamp, now, now);
}
