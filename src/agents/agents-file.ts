import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { OperatorError } from "../errors.js";
import { fieldPath } from "../util/field-path.js";
import { optionalString } from "../util/env-values.js";

export const agentVariables = { AGENTS_FILE: optionalString };

export class AgentsFileError extends OperatorError {
  override readonly name = "AgentsFileError";
}

/** A problem of `AGENTS_FILE`, as one line: the file, the entry and the field (`AGENTS_FILE agents.yaml: agents[1].tools: …`). */
export const agentsFileError = (file: string, where: string, message: string) =>
  new AgentsFileError(`AGENTS_FILE ${file}: ${where ? `${where}: ` : ""}${message}`);

/**
 * Reads and checks `AGENTS_FILE` (JSON, or YAML, which JSON is a part of):
 * `{"agents": [entry, …]}`, each entry checked by `entry` (the fields of
 * `POST /agents`, and `tenant`). A name appears once per tenant. What can
 * be checked only against the tools and models (`applyAgentsFile`) is
 * checked when the file is applied.
 */
export function loadAgentsFile<E extends z.ZodType<{ name: string; tenant?: string | undefined }>>(
  file: string,
  { entry }: { entry: E },
): Array<z.output<E>> {
  const fail = (where: string, message: string): never => {
    throw agentsFileError(file, where, message);
  };
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    fail("", `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    fail("", `is not ${/\.json$/i.test(file) ? "JSON" : "YAML or JSON"}: ${(err as Error).message.split("\n")[0]}`);
  }
  const list = z.array(entry, {
    error: (issue) => (issue.input === undefined ? "is required: a list of agents" : "must be a list of agents"),
  });
  const parsed = z.strictObject({ agents: list }, { error: 'must be an object: {"agents": […]}' }).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
    fail(fieldPath(field), issue.code === "unrecognized_keys" ? "is not a field an agent has" : issue.message);
  }
  const entries = parsed.data!.agents;
  const seen = new Map<string, number>();
  entries.forEach((agent, i) => {
    const key = `${agent.tenant ?? "default"}/${agent.name}`;
    if (seen.has(key)) fail(`agents[${i}].name`, `${agent.name} is also agents[${seen.get(key)}]'s name`);
    seen.set(key, i);
  });
  return entries;
}
