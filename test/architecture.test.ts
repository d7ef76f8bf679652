import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";

/**
 * The layout's rules (../shared/STYLE.md), read from the import graph of
 * src/: each test names the files that break a rule, so a change that
 * breaks one fails here with the import to remove.
 */

const SRC = path.resolve(import.meta.dirname, "../src");

interface Import {
  from: string;
  /** A file of src/ (relative), or a package's name. */
  to: string;
  /** `import type` (or every name imported as a type): gone at runtime. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(file) : file.endsWith(".ts") ? [file] : [];
  });
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const from = path.relative(SRC, file);
  const found: Import[] = [];
  for (const statement of source.statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier)) continue;
    let typeOnly: boolean;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      typeOnly =
        !!clause &&
        (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((n) => n.isTypeOnly)));
    } else {
      typeOnly = statement.isTypeOnly;
    }
    const spec = specifier.text;
    const to = spec.startsWith(".")
      ? path.relative(SRC, path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")))
      : packageOf(spec);
    found.push({ from, to, typeOnly });
  }
  // Dynamic imports load at runtime too.
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    const spec = m[1]!;
    found.push({
      from,
      to: spec.startsWith(".")
        ? path.relative(SRC, path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")))
        : packageOf(spec),
      typeOnly: false,
    });
  }
  return found;
}

const packageOf = (spec: string) =>
  spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf);
const folderOf = (file: string) => (file.includes(path.sep) ? file.split(path.sep)[0]! : null);
const isLocal = (i: Import) => i.to.endsWith(".ts");

/** The imports of `from` folders into `to` folders (or packages) that break a rule, as "a.ts → b.ts". */
function breaking({
  from,
  to,
  runtimeOnly,
}: {
  from: string[];
  to: (i: Import) => boolean;
  runtimeOnly: boolean;
}): string[] {
  return imports
    .filter((i) => from.includes(folderOf(i.from) ?? "") && (!runtimeOnly || !i.typeOnly) && to(i))
    .map((i) => `${i.from} → ${i.to}`);
}
const inFolders =
  (...folders: string[]) =>
  (i: Import) =>
    isLocal(i) && folders.includes(folderOf(i.to) ?? "");

describe("the import graph", () => {
  test("has no cycle, type imports included", () => {
    const next = new Map<string, string[]>();
    for (const i of imports.filter(isLocal)) next.set(i.from, [...(next.get(i.from) ?? []), i.to]);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const to of next.get(file) ?? []) {
        if (state.get(to) === "open") cycles.push([...stack.slice(stack.indexOf(to)), to].join(" → "));
        else if (!state.has(to)) visit(to);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of next.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  test("agents/ sits on conversations/: nothing under http/ imports it, but the composition root", () => {
    expect(
      breaking({
        from: ["core", "util", "store", "tools", "providers", "agent", "runs", "conversations", "telemetry"],
        to: inFolders("agents"),
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("mcp-server/ and a2a/ are front doors: only http/ imports them, and neither imports the other", () => {
    const below = [
      "core",
      "util",
      "store",
      "tools",
      "providers",
      "agent",
      "runs",
      "conversations",
      "agents",
      "telemetry",
    ];
    expect(breaking({ from: below, to: inFolders("mcp-server", "a2a"), runtimeOnly: false })).toEqual([]);
    expect(breaking({ from: ["mcp-server"], to: inFolders("a2a", "http"), runtimeOnly: false })).toEqual([]);
    expect(breaking({ from: ["a2a"], to: inFolders("mcp-server", "http"), runtimeOnly: false })).toEqual([]);
  });

  test("core/ is the bottom: it imports only core/", () => {
    expect(
      breaking({ from: ["core"], to: (i) => isLocal(i) && folderOf(i.to) !== "core", runtimeOnly: false }),
    ).toEqual([]);
  });

  test("core/ imports no package but zod: no node: builtin, no media or SDK library", () => {
    expect(breaking({ from: ["core"], to: (i) => !isLocal(i) && i.to !== "zod", runtimeOnly: false })).toEqual([]);
  });

  test("util/ is generic: it imports nothing of src/ outside util/ but the error classes (errors.ts imports nothing)", () => {
    expect(
      breaking({
        from: ["util"],
        to: (i) => isLocal(i) && folderOf(i.to) !== "util" && i.to !== "errors.ts",
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("store/, tools/ and providers/ take the shared words from core/, never from agent/ or above", () => {
    expect(
      breaking({
        from: ["store", "tools", "providers"],
        to: inFolders("attachments", "agent", "runs", "conversations", "http", "telemetry"),
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("agent/ sees providers, tools and the store only through interfaces: no SDK, Fastify, drizzle, runs/ or above", () => {
    const packages = ["@anthropic-ai/sdk", "openai", "fastify", "drizzle-orm", "pg", "@electric-sql/pglite", "pino"];
    expect(
      breaking({
        from: ["agent"],
        to: (i) =>
          packages.includes(i.to) || inFolders("store", "attachments", "runs", "conversations", "http", "telemetry")(i),
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("attachments/ checks and keeps media on core/, store/ and tools/: nothing of agent/, runs/ or above", () => {
    expect(
      breaking({
        from: ["attachments"],
        to: inFolders("agent", "runs", "conversations", "http", "telemetry"),
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("runs/ writes run data without telemetry/: nothing of it at runtime", () => {
    expect(
      breaking({ from: ["runs"], to: inFolders("telemetry", "conversations", "http"), runtimeOnly: true }),
    ).toEqual([]);
  });

  test("conversations/ reaches runs/ only through run-manager.ts and start-run.ts", () => {
    const doors = ["run-manager.ts", "start-run.ts"].map((file) => path.join("runs", file));
    expect(
      breaking({
        from: ["conversations"],
        to: (i) => inFolders("runs")(i) && !doors.includes(i.to),
        runtimeOnly: false,
      }),
    ).toEqual([]);
  });

  test("telemetry/ only listens: at runtime it imports nothing of runs/, conversations/, http/ or agent/", () => {
    expect(
      breaking({
        from: ["telemetry"],
        to: inFolders("runs", "conversations", "http", "agent", "attachments", "store", "tools", "providers"),
        runtimeOnly: true,
      }),
    ).toEqual([]);
  });

  test("only providers/ import an LLM SDK, only store/ drizzle and the drivers, only http/ (and app.ts) Fastify, only a2a/ the A2A SDK", () => {
    const owners: Record<string, string[]> = {
      "@anthropic-ai/sdk": ["providers"],
      openai: ["providers"],
      "drizzle-orm": ["store"],
      pg: ["store"],
      "@electric-sql/pglite": ["store"],
      fastify: ["http", "app.ts"],
      "@a2a-js/sdk": ["a2a"],
    };
    const strays = imports
      .filter(
        (i) =>
          owners[i.to] && !i.typeOnly && !owners[i.to]!.some((owner) => folderOf(i.from) === owner || i.from === owner),
      )
      .map((i) => `${i.from} → ${i.to}`);
    expect(strays).toEqual([]);
  });
});

test("every file of src/ lives in a folder but the composition root's", () => {
  const compositionRoot = ["main.ts", "serve.ts", "app.ts", "config.ts", "services.ts", "errors.ts"];
  const loose = files.map((file) => path.relative(SRC, file)).filter((file) => folderOf(file) === null);
  expect(loose.filter((file) => !compositionRoot.includes(file))).toEqual([]);
});

test("errors.ts, which util/ may import, imports nothing of src/", () => {
  expect(imports.filter((i) => i.from === "errors.ts" && isLocal(i)).map((i) => `${i.from} → ${i.to}`)).toEqual([]);
});

test("event and message numbers are worked out in one place (runs/run-numbering.ts), not added up by hand", () => {
  const counting = /\b(\w*Seq|seq)\s*\+\s*\d|\b\d\s*\*\s*i\b|\b(seq|lastSeq):\s*\d/;
  const where = files
    .filter((file) => ["runs", "conversations", "http", "agent"].includes(folderOf(path.relative(SRC, file)) ?? ""))
    .filter(
      (file) =>
        !file.endsWith(path.join("runs", "run-numbering.ts")) &&
        !file.endsWith(path.join("http", "schemas", "examples.ts")),
    )
    .flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (counting.test(line) ? [`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
  expect(where).toEqual([]);
});

describe("file sizes", () => {
  const lines = (file: string) => readFileSync(file, "utf8").split("\n").length - 1;
  const over = (limit: number, which: (file: string) => boolean) =>
    files
      .map((file) => path.relative(SRC, file))
      .filter(which)
      .map((file) => ({ file, lines: lines(path.join(SRC, file)) }))
      .filter((f) => f.lines > limit);

  test("no file over 300 lines but the drizzle schema", () => {
    expect(over(300, (file) => file !== path.join("store", "schema.ts"))).toEqual([]);
  });

  test("none over 200 in agent/, and the loop an orchestrator of about 120", () => {
    expect(over(200, (file) => folderOf(file) === "agent")).toEqual([]);
    expect(over(120, (file) => file === path.join("agent", "run-agent-loop.ts"))).toEqual([]);
  });
});

test("the project layout in docs/architecture.md names every folder of src/, and no folder that is not there", () => {
  const page = readFileSync(path.resolve(SRC, "../docs/architecture.md"), "utf8");
  const layout = page.slice(page.indexOf("## Project layout"));
  const block = layout.slice(layout.indexOf("```") + 3, layout.indexOf("```", layout.indexOf("```") + 3));
  const named = [...block.matchAll(/^ {2}([a-z0-9-]+(?:\/[a-z0-9-]+)*)\/\s/gm)].map((m) => m[1]!).sort();
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  expect(named.filter((n) => !n.includes("/")).sort()).toEqual(folders.sort());
  for (const nested of named.filter((n) => n.includes("/")))
    expect(readdirSync(path.join(SRC, nested)).length).toBeGreaterThan(0);
});

describe("the extension points are data: a provider or a tool source is named in its registry, not in lists and branches", () => {
  const PROVIDER_NAMES = ["anthropic", "openai", "mock"];
  const TOOL_SOURCES = ["builtin", "http", "mcp", "command"];
  const parsed = files.map((file) => ({
    file: path.relative(SRC, file),
    source: ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true),
  }));
  const where = (file: string, source: ts.SourceFile, node: ts.Node) =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${node.getText(source)}`;
  const literals = (source: ts.SourceFile, names: string[]) => {
    const found: ts.StringLiteralLike[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isStringLiteralLike(node) && names.includes(node.text)) found.push(node);
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  };

  test("no provider's name as a string literal outside core/model-provider.ts, providers/registry.ts and the provider's own folder", () => {
    // The one place a name may stand: an example's value in the OpenAPI document (`provider: "mock"`), data that a new provider never edits.
    const isExampleValue = (node: ts.Node) => ts.isPropertyAssignment(node.parent) && node.parent.initializer === node;
    const allowed = (file: string, name: string) =>
      file === path.join("core", "model-provider.ts") ||
      file === path.join("providers", "registry.ts") ||
      file.startsWith(path.join("providers", name) + path.sep);
    const strays = parsed.flatMap(({ file, source }) =>
      literals(source, PROVIDER_NAMES)
        .filter((node) => !allowed(file, node.text) && !isExampleValue(node))
        .map((node) => where(file, source, node)),
    );
    expect(strays).toEqual([]);
  });

  test("a TOOLS_FILE source's key as a string literal only in its own folder (tools/<key>/) and tools/sources.ts", () => {
    const FILE_SOURCES = ["http", "mcp"];
    // Where "http" means something else: a server's transport, an OpenAPI security scheme's type.
    const otherMeaning: Record<string, string> = {
      [path.join("tools", "tool-server-status.ts")]: "http",
      [path.join("tools", "mcp", "mcp-server.ts")]: "http",
      [path.join("http", "plugins", "openapi-document.ts")]: "http",
    };
    const allowed = (file: string, key: string) =>
      file === path.join("tools", "sources.ts") ||
      file.startsWith(path.join("tools", key) + path.sep) ||
      otherMeaning[file] === key;
    const strays = parsed.flatMap(({ file, source }) =>
      literals(source, FILE_SOURCES)
        .filter((node) => !allowed(file, node.text))
        .map((node) => where(file, source, node)),
    );
    expect(strays).toEqual([]);
  });

  test("the composition root wires tool sources without naming one: app.ts and services.ts never mention MCP", () => {
    const mentions = ["app.ts", "services.ts"].flatMap((file) =>
      readFileSync(path.join(SRC, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (/mcp/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(mentions).toEqual([]);
  });

  test("no tool source spelled out as a list, a type or a branch outside tools/define-tool.ts, tools/sources.ts and the source's own folder", () => {
    const allowed = (file: string, name: string) =>
      file === path.join("tools", "define-tool.ts") ||
      file === path.join("tools", "sources.ts") ||
      file.startsWith(path.join("tools", name) + path.sep);
    // A list (two sources or more in one array or union), a lone literal type, or a comparison with a tool's `source`.
    const isListed = (node: ts.Node) => {
      const list = node.parent;
      if (ts.isArrayLiteralExpression(list))
        return list.elements.filter((e) => ts.isStringLiteralLike(e) && TOOL_SOURCES.includes(e.text)).length > 1;
      if (ts.isLiteralTypeNode(list))
        return (
          !ts.isUnionTypeNode(list.parent) ||
          list.parent.types.filter(
            (t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) && TOOL_SOURCES.includes(t.literal.text),
          ).length > 1
        );
      if (ts.isBinaryExpression(list)) {
        const other = list.left === node ? list.right : list.left;
        return ts.isPropertyAccessExpression(other) && other.name.text === "source";
      }
      return ts.isCaseClause(list);
    };
    const strays = parsed.flatMap(({ file, source }) =>
      literals(source, TOOL_SOURCES)
        .filter((node) => !allowed(file, node.text) && isListed(node))
        .map((node) => where(file, source, node)),
    );
    expect(strays).toEqual([]);
  });
});

describe("tests by subject", () => {
  const TEST = import.meta.dirname;
  /** Folders of test/ that are not a folder of src/: the contract, whole processes, many instances behind a pooler, the shared harness, the repository's other parts. */
  const outsideSrc = new Set(["http", "e2e", "scale", "support", "web", "scripts", "examples"]);
  const foldersUnder = (root: string, dir = ""): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => {
        const folder = path.join(dir, e.name);
        return [folder, ...foldersUnder(root, folder)];
      });
  const srcFolders = new Set(foldersUnder(SRC));
  const srcNames = new Set([...srcFolders].map((folder) => path.basename(folder)));
  /** A test folder mirrors src/: test/a/b is src/a/b; a top folder may also take a subject src/ keeps deeper (attachments). */
  const strays = (testFolders: string[]) =>
    testFolders.filter((folder) => {
      const [top, ...rest] = folder.split(path.sep);
      if (outsideSrc.has(top!)) return false;
      return rest.length === 0 ? !srcNames.has(top!) : !srcFolders.has(folder);
    });
  const testFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? testFiles(path.join(dir, e.name)) : [path.relative(TEST, path.join(dir, e.name))],
    );

  test("every folder of test/ names a folder of src/, or is http/, e2e/, scale/, support/, web/, scripts/ or examples/", () => {
    expect(strays(["review", "helpers", path.join("tools", "nope")])).toEqual([
      "review",
      "helpers",
      path.join("tools", "nope"),
    ]);
    expect(strays(foldersUnder(TEST))).toEqual([]);
  });

  test("no test file is named for the review that found it: the name says the behaviour", () => {
    const named = (files: string[]) => files.filter((file) => /review/i.test(path.basename(file)));
    expect(named(["runs/review-19-cap-race.test.ts"])).toHaveLength(1);
    expect(named(testFiles(TEST))).toEqual([]);
  });
});
