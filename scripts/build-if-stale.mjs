// `npm start` runs this first: it builds what changed since the last build
// and nothing else, so a start with nothing changed costs a look at the files'
// times, about a second instead of a whole `tsc` run. Two builds, each with
// its own inputs and its own stamp: the server (tsc → dist/) and the
// playground (vite, web/ → dist/web/). `--only=web` or `--only=server` checks one.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const at = (...parts) => path.join(root, ...parts);

function newest(entry) {
  const info = statSync(entry);
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newest(path.join(entry, name))), info.mtimeMs);
}

const builds = [
  {
    name: "server",
    stamp: at("dist", "main.js"),
    inputs: ["src", "tsconfig.json", "tsconfig.build.json", "package.json"],
    command: [at("node_modules", "typescript", "bin", "tsc"), "-p", at("tsconfig.build.json")],
  },
  {
    name: "web",
    stamp: at("dist", "web", "index.html"),
    inputs: ["web", "package.json"],
    command: [
      at("node_modules", "vite", "bin", "vite.js"),
      "build",
      "--config",
      at("web", "vite.config.ts"),
      "--outDir",
      at("dist", "web-next"),
      "--logLevel",
      "warn",
    ],
    // What users get, whoever runs this: vitest sets NODE_ENV=test, which Vite would build as React's development bundle (StrictMode's double effects and all).
    env: { NODE_ENV: "production" },
    // Built aside, then put in place with renames: a loopd starting meanwhile (a test) reads the old build or the new one, never half of one.
    swap: { from: at("dist", "web-next"), to: at("dist", "web") },
  },
];

const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
for (const build of builds) {
  if (only && only !== build.name) continue;
  const built = existsSync(build.stamp) ? statSync(build.stamp).mtimeMs : 0;
  if (!build.inputs.some((p) => existsSync(at(p)) && newest(at(p)) > built)) continue;
  process.stdout.write(
    `building ${build.name === "web" ? "the playground" : "the server"} (sources changed since the last build)…\n`,
  );
  const t0 = performance.now();
  execFileSync(process.execPath, build.command, { stdio: "inherit", cwd: root, env: { ...process.env, ...build.env } });
  if (build.swap) {
    const old = `${build.swap.to}-old`;
    rmSync(old, { recursive: true, force: true });
    if (existsSync(build.swap.to)) renameSync(build.swap.to, old);
    renameSync(build.swap.from, build.swap.to);
    rmSync(old, { recursive: true, force: true });
  }
  // A build may leave an unchanged file as it was: mark the build as newer than every source.
  const now = new Date();
  utimesSync(build.stamp, now, now);
  process.stdout.write(`built ${build.name} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
