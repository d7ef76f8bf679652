import { mkdirSync } from "node:fs";
import { createInterface } from "node:readline";
import { lockDataDir, type DataDirLock } from "../../src/store/data-dir-lock.js";

/**
 * A process other than the test's that takes an embedded database's folder
 * and keeps it until its stdin ends (or it is killed): `hold <dir>` tries at
 * once, `race <dir>` when it reads "go" (so that several try at the same
 * moment). Prints "ready" when it is listening, then "held" or the refusal.
 */
const [mode, dir] = process.argv.slice(2) as ["hold" | "race", string];
let lock: DataDirLock | undefined;
const attempt = () => {
  try {
    mkdirSync(dir, { recursive: true });
    lock = lockDataDir(dir, { program: "a test holder" });
    console.log("held");
  } catch (err) {
    console.log(`refused: ${(err as Error).message}`);
  }
};
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => line === "go" && attempt());
lines.on("close", () => {
  lock?.release();
  process.exit(0);
});
console.log("ready");
if (mode === "hold") attempt();
