import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { OperatorError } from "../errors.js";
import { fieldPath } from "../util/field-path.js";
import { evalCaseSchema } from "./eval-case.js";
import type { LoadedCase } from "./case-result.js";

/**
 * The cases of a file, or of every `.json` file of a folder (and its
 * folders), in name order. A file holds one case or an array of them. Every
 * malformed file is named, with each field that is wrong, before anything
 * runs.
 */
export function loadEvalCases(target: string): LoadedCase[] {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    throw new OperatorError(`${target}: no such file or folder`);
  }
  const files = stat.isDirectory() ? jsonFilesOf(target) : [target];
  if (files.length === 0) throw new OperatorError(`${target}: the folder holds no .json case files`);
  const problems: string[] = [];
  const cases: LoadedCase[] = [];
  for (const file of files) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      problems.push(`${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const items = Array.isArray(json) ? json : [json];
    items.forEach((item, i) => {
      const parsed = evalCaseSchema.safeParse(item);
      const where = Array.isArray(json) ? [i] : [];
      if (parsed.success) cases.push({ file, evalCase: parsed.data });
      else
        problems.push(
          ...parsed.error.issues.map((issue) => `${file}: ${fieldOf([...where, ...issue.path])}: ${messageOf(issue)}`),
        );
    });
  }
  if (problems.length > 0)
    throw new OperatorError(
      `${problems.length === 1 ? "a case is" : "cases are"} malformed:\n  ${problems.join("\n  ")}`,
    );
  return cases;
}

function jsonFilesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) =>
      e.isDirectory() ? jsonFilesOf(path.join(dir, e.name)) : e.name.endsWith(".json") ? [path.join(dir, e.name)] : [],
    );
}

/** `expect.final_text.regex`, `history[2].content`; `(the case)` at the top. */
const fieldOf = (p: PropertyKey[]) => (p.length === 0 ? "(the case)" : fieldPath(p));

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && / received undefined$/.test(issue.message))
    return `is required (${issue.expected})`;
  if (issue.code === "unrecognized_keys")
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
  return issue.message;
}
