import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** Where a test reads which database kind it runs on: a file holding this name can behave differently on each. */
const DATABASE_KIND_VARIABLE = "TEST_DATABASE";

/** Static, side-effect and dynamic imports of a relative module, as this codebase writes them. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/**
 * The test files under `root` that never reach the code choosing the test
 * database: neither they nor any module they import, at any depth, mention
 * `TEST_DATABASE_URL` (or its pooler). They run the same on PGlite and on
 * Postgres — pure functions, the fake LLM, a process on a `DATA_DIR` of its
 * own — so the Postgres pass leaves them to the PGlite pass instead of
 * running them a second time. A module reached only as a spawned script is
 * not followed; none of those reads the variable (the database a spawned
 * loopd uses reaches it as `DATABASE_URL` or `DATA_DIR`, from a test that
 * does read it).
 */
export function databaseFreeTestFiles(root: string): string[] {
  const modules = new Map<string, { reads: boolean; imports: string[] }>();
  const moduleOf = (file: string) => {
    let module = modules.get(file);
    if (!module) {
      const text = readFileSync(file, "utf8");
      const imports = [...text.matchAll(RELATIVE_IMPORT)].map((match) =>
        resolveModule(path.dirname(file), match[1] as string),
      );
      module = { reads: text.includes(DATABASE_KIND_VARIABLE), imports: imports.filter((name) => name !== null) };
      modules.set(file, module);
    }
    return module;
  };
  const reaches = (file: string): boolean => {
    const seen = new Set([file]);
    const next = [file];
    for (let current = next.pop(); current !== undefined; current = next.pop()) {
      const module = moduleOf(current);
      if (module.reads) return true;
      for (const imported of module.imports) {
        if (seen.has(imported)) continue;
        seen.add(imported);
        next.push(imported);
      }
    }
    return false;
  };
  return testFiles(root)
    .filter((file) => !reaches(file))
    .map((file) => path.relative(root, file).split(path.sep).join("/"));
}

/** `./x.js` as the `.ts` source it names (or the file itself); outside the repository's sources, null. */
function resolveModule(from: string, specifier: string): string | null {
  const target = path.resolve(from, specifier);
  for (const candidate of [target.replace(/\.js$/, ".ts"), target.replace(/\.js$/, ".tsx"), target]) {
    if (candidate.includes(`${path.sep}node_modules${path.sep}`)) return null;
    if (/\.(ts|tsx|js|mjs)$/.test(candidate) && existsSync(candidate)) return candidate;
  }
  return null;
}

function testFiles(root: string): string[] {
  return readdirSync(path.join(root, "test"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => path.join(root, "test", name))
    .sort();
}
