import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildTestPrograms } from "./test-programs.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/**
 * vitest's global setup: builds src/ into dist/ once for the run (esbuild,
 * file by file, as `npm start` does; about a second), so that the tests that
 * start loopd's programs as processes run them compiled (`programArgs` in
 * test/e2e/run-program.ts). Under tsx every start compiled the sources again:
 * 3 s of CPU each, and the suite starts a hundred and more. The tests' own
 * programs are built after it, onto that build (test-programs.ts).
 */
export default async function setup(): Promise<void> {
  execFileSync(process.execPath, [path.join(root, "scripts", "build-if-stale.mjs"), "--only=server", "--force"], {
    cwd: root,
    stdio: "inherit",
  });
  await buildTestPrograms(root);
}
