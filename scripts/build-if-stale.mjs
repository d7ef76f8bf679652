// `npm start` runs this first: it builds what changed since the last build and
// nothing else. Two builds, each with its own inputs and its own stamp:
// - the server: src/ transpiled file by file into dist/ by esbuild (under a
//   second, where tsc took about 20; the type check is `npm run typecheck`'s),
//   when a source is newer than dist/main.js;
// - the playground: web/ built by vite into dist/web/, when the hash of web/'s
//   files and package-lock.json differs from the one the last build wrote
//   (dist/web/.sources-hash), so a fresh clone or a `git checkout` that leaves
//   web/ as it was does not rebuild it.
// `--only=web` or `--only=server` checks one; `--force` builds even if nothing changed.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createHash } from "node:crypto";
import {
  existsSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const at = (...parts) => path.join(root, ...parts);

/** Every file under `entry` (sorted, so a hash over them is stable). */
function filesUnder(entry) {
  if (!statSync(entry).isDirectory()) return [entry];
  return readdirSync(entry)
    .sort()
    .flatMap((name) => filesUnder(path.join(entry, name)));
}

function newest(entry) {
  const info = statSync(entry);
  if (!info.isDirectory()) return info.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newest(path.join(entry, name))), info.mtimeMs);
}

function hashOf(inputs) {
  const hash = createHash("sha256");
  for (const file of inputs.filter((p) => existsSync(at(p))).flatMap((p) => filesUnder(at(p)))) {
    hash.update(path.relative(root, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

const WEB_INPUTS = ["web", "package-lock.json"];
const WEB_HASH_FILE = at("dist", "web", ".sources-hash");

const builds = [
  {
    name: "server",
    label: "the server",
    stale() {
      const stamp = at("dist", "main.js");
      const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
      return ["src", "tsconfig.json", "package.json"].some((p) => existsSync(at(p)) && newest(at(p)) > built);
    },
    async build() {
      const { build } = await import("esbuild");
      const entryPoints = filesUnder(at("src")).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
      // File by file, as tsc wrote them: dist/ keeps src/'s layout, so the paths read from import.meta
      // (the migrations, the playground, the schema worker) resolve from dist/ as from src/.
      await build({
        entryPoints,
        outbase: at("src"),
        outdir: at("dist"),
        bundle: false,
        platform: "node",
        format: "esm",
        target: "node20",
        sourcemap: true,
        tsconfig: at("tsconfig.json"),
        logLevel: "warning",
      });
      // esbuild leaves an unchanged file as it was: mark the build as newer than every source.
      const now = new Date();
      utimesSync(at("dist", "main.js"), now, now);
    },
  },
  {
    name: "web",
    label: "the playground",
    stale() {
      const last = existsSync(WEB_HASH_FILE) ? readFileSync(WEB_HASH_FILE, "utf8").trim() : "";
      return last !== hashOf(WEB_INPUTS);
    },
    async build() {
      const next = at("dist", "web-next");
      const vite = spawn(
        process.execPath,
        [
          at("node_modules", "vite", "bin", "vite.js"),
          "build",
          "--config",
          at("web", "vite.config.ts"),
          "--outDir",
          next,
          "--logLevel",
          "warn",
        ],
        // What users get, whoever runs this: vitest sets NODE_ENV=test, which Vite would build as React's development bundle (StrictMode's double effects and all).
        { stdio: "inherit", cwd: root, env: { ...process.env, NODE_ENV: "production" } },
      );
      const [code, signal] = await once(vite, "exit");
      if (code !== 0) throw new Error(`vite build failed (${signal ?? `exit ${code}`})`);
      writeFileSync(path.join(next, ".sources-hash"), `${hashOf(WEB_INPUTS)}\n`);
      // Built aside, then put in place with renames: a loopd starting meanwhile (a test) reads the old build or the new one, never half of one.
      const to = at("dist", "web");
      const old = `${to}-old`;
      rmSync(old, { recursive: true, force: true });
      if (existsSync(to)) renameSync(to, old);
      renameSync(next, to);
      rmSync(old, { recursive: true, force: true });
    },
  },
];

const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const force = process.argv.includes("--force");
// The stale ones at once: esbuild is done in a second, while vite takes several.
const results = await Promise.allSettled(
  builds
    .filter((build) => (!only || only === build.name) && (force || build.stale()))
    .map(async (build) => {
      process.stdout.write(`building ${build.label} (sources changed since the last build)…\n`);
      const t0 = performance.now();
      await build.build();
      process.stdout.write(`built ${build.name} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }),
);
const failed = results.filter((r) => r.status === "rejected");
for (const { reason } of failed) process.stderr.write(`${reason instanceof Error ? reason.message : reason}\n`);
if (failed.length > 0) process.exit(1);
