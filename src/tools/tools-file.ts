import { readFileSync } from "node:fs";
import { z } from "zod";
import { fieldPath } from "../util/field-path.js";
import { type TOOL_SOURCES, toolSources } from "./sources.js";
import { familyOf, type NameClaim, type ToolSource } from "./tool-source.js";

/** A `${VAR}` in a string of the file: read from the environment. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** One section per source, under its key: a list of its entries, empty when absent. */
const toolsFileSchema = z.strictObject(
  Object.fromEntries(toolSources.map((source) => [source.key, z.array(source.fileSchema).default([])])),
);

type EntryOf<S> = S extends ToolSource<infer Entry, string> ? Entry : never;
/** `TOOLS_FILE` read: each source's entries under its key (`http`, `mcp`). */
export type ToolsFile = { [S in (typeof TOOL_SOURCES)[number] as S["key"]]: EntryOf<S>[] };

/** A source's section of the file. */
export const entriesOf = (file: ToolsFile, source: ToolSource): readonly unknown[] =>
  (file as Record<string, readonly unknown[]>)[source.key] ?? [];

/** The file without a tool (no `TOOLS_FILE`). */
export const emptyToolsFile = (): ToolsFile => toolsFileSchema.parse({}) as ToolsFile;

export class ToolsFileError extends Error {
  override readonly name = "ToolsFileError";
}

/**
 * Reads and checks `TOOLS_FILE`: every problem is one line naming the file,
 * the entry and the field (`TOOLS_FILE tools.json: http[0].url: …`). `${VAR}`
 * in any string is read from `env`; one that is not set is an error naming
 * it. Names must be unique among the file's tools and `taken` (the built-ins).
 */
export function loadToolsFile(
  file: string,
  { env, taken }: { env: Record<string, unknown>; taken: readonly string[] },
): ToolsFile {
  const fail = (where: string, message: string): never => {
    throw new ToolsFileError(`TOOLS_FILE ${file}: ${where ? `${where}: ` : ""}${message}`);
  };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return fail("", `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return fail("", `is not JSON: ${(err as Error).message}`);
  }
  const parsed = toolsFileSchema.safeParse(substitute(raw, env, fail));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
    fail(fieldPath(field), issue.code === "unrecognized_keys" ? "is not a field loopd knows" : issue.message);
  }
  // Composed from the sources, the schema's output is typed loosely: it is a ToolsFile by construction.
  const tools = parsed.data as ToolsFile;
  checkNames(tools, { taken, fail });
  return tools;
}

/**
 * Names are unique across every source and `taken`: a tool's name, and a
 * family's (a server's), whose tools are named `<family>__<tool>`, so no
 * other tool may take a name of that form.
 */
function checkNames(
  file: ToolsFile,
  { taken, fail }: { taken: readonly string[]; fail: (where: string, message: string) => never },
): void {
  const claims = toolSources.flatMap((source) =>
    entriesOf(file, source).map((entry, i): { where: string; claim: NameClaim } => ({
      where: `${source.key}[${i}]`,
      claim: source.claimOf(entry),
    })),
  );
  const tools = claims.flatMap(({ where, claim }) => ("tool" in claim ? [{ where, name: claim.tool }] : []));
  const families = claims.flatMap(({ where, claim }) => ("family" in claim ? [{ where, name: claim.family }] : []));
  const owners = new Map<string, string>(taken.map((name) => [name, "a built-in tool"]));
  for (const { where, name } of tools) {
    const owner = owners.get(name);
    if (owner) fail(`${where}.name`, `${name} is also ${owner}'s name: tool names are unique across every source`);
    owners.set(name, where);
  }
  const familyOwners = new Map<string, string>();
  for (const { where, name } of families) {
    const owner = familyOwners.get(name);
    if (owner) fail(`${where}.name`, `${name} is also ${owner}'s name`);
    familyOwners.set(name, where);
  }
  for (const { where, name } of tools) {
    const family = familyOf(name);
    const owner = family === null ? undefined : familyOwners.get(family);
    if (owner)
      fail(
        `${where}.name`,
        `${name} is a name of ${owner}'s tools (${family}__…): tool names are unique across every source`,
      );
  }
}

/** What of the file never appears in a log or a trace: each source says what of its entries is secret. */
export function secretsOfToolsFile(file: ToolsFile): string[] {
  return toolSources.flatMap((source) => entriesOf(file, source).flatMap((entry) => source.secretsOf(entry)));
}

function substitute(
  value: unknown,
  env: Record<string, unknown>,
  fail: (where: string, message: string) => never,
  path: (string | number)[] = [],
): unknown {
  if (typeof value === "string") {
    return value.replace(VARIABLE, (_, name: string) => {
      const found = env[name];
      return typeof found === "string" && found !== ""
        ? found
        : fail(fieldPath(path), `\${${name}} is not set in the environment`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, fail, [...path, i]));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, env, fail, [...path, k])]));
  return value;
}
