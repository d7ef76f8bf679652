import path from "node:path";
import { build, type Plugin } from "esbuild";

/** The tests' own programs that tests start as processes: each imports loopd from src/. */
export const TEST_PROGRAMS = ["test/e2e/main-with-test-tools.ts", "test/store/hold-data-dir.ts"];

/** Where the run's build of a test program goes (`entry` relative to the repository): dist/test-programs/, beside src/'s build. */
export function builtTestProgram(root: string, entry: string): string {
  return path.join(root, "dist", "test-programs", path.relative("test", entry)).replace(/\.ts$/, ".js");
}

/**
 * Builds each of `TEST_PROGRAMS` into one file: its own code and the test
 * code it imports, with every import of src/ pointed at the run's build of
 * src/ in dist/. Started, such a program loads what `npm start` loads; under
 * tsx each start compiled the sources again (2 s of CPU, more on a busy
 * machine), and the crash tests start one twenty times and more.
 */
export async function buildTestPrograms(root: string): Promise<void> {
  await build({
    entryPoints: TEST_PROGRAMS.map((entry) => ({
      in: path.join(root, entry),
      out: builtTestProgram(root, entry).replace(/\.js$/, ""),
    })),
    outdir: root,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    tsconfig: path.join(root, "tsconfig.json"),
    logLevel: "warning",
    plugins: [loopdFromDist(root)],
  });
}

/** A relative import that lands in src/ is left to the process, as the same module of dist/. */
function loopdFromDist(root: string): Plugin {
  const src = path.join(root, "src");
  return {
    name: "loopd-from-dist",
    setup(builder) {
      builder.onResolve({ filter: /^\.{1,2}\// }, ({ path: specifier, resolveDir }) => {
        const target = path.resolve(resolveDir, specifier);
        if (!target.startsWith(src + path.sep)) return undefined;
        return { path: path.join(root, "dist", path.relative(src, target)), external: true };
      });
    },
  };
}
