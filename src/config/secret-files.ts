import { readFileSync } from "node:fs";
import { blank, optionalString } from "../util/env-values.js";
import { OperatorError } from "../errors.js";
import { PROVIDER_NAMES } from "../core/model-provider.js";
import { PROVIDERS } from "../providers/registry.js";

/** The secrets that may come from a file, as Docker and Kubernetes mount them: `X_FILE` names the file that holds `X`. */
export const SECRET_FILE_NAMES: readonly string[] = [
  ...PROVIDER_NAMES.flatMap((name) => PROVIDERS[name].keyVariable ?? []),
  "DATABASE_URL",
  "DATABASE_DIRECT_URL",
  "ADMIN_TOKEN",
  "WEBHOOK_SECRET",
  "METRICS_TOKEN",
  "RESPONSES_COMPACT_KEY",
];

/** The `X_FILE` variables (composed into config.ts's, so .env.example and the README list them; read through `readSecretFiles`). */
export const secretFileVariables: Record<string, typeof optionalString> = Object.fromEntries(
  SECRET_FILE_NAMES.map((name) => [`${name}_FILE`, optionalString]),
);

/**
 * The values of the `X_FILE` variables set in `env`: each file's text, its
 * trailing line break dropped, as `X`. Only loopd reads them: they are
 * given back, never written into `env`, so no child process (run_command,
 * an MCP server) inherits them, and `${X}` in TOOLS_FILE does not see them.
 * `X` and `X_FILE` both set, a file that cannot be read, or an empty one
 * stops start-up with a message naming the variable and the path, never
 * the content.
 */
export function readSecretFiles(
  env: Record<string, string | undefined>,
  { read = (file: string) => readFileSync(file, "utf8") }: { read?: (file: string) => string } = {},
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of SECRET_FILE_NAMES) {
    const file = env[`${name}_FILE`];
    if (blank(file)) continue;
    if (!blank(env[name])) throw new OperatorError(`${name} and ${name}_FILE are both set: set one of them`);
    let text: string;
    try {
      text = read(file!);
    } catch (err) {
      throw new OperatorError(
        `${name}_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        { cause: err },
      );
    }
    const value = text.replace(/[\r\n]+$/, "");
    if (value === "") throw new OperatorError(`${name}_FILE ${file} is empty`);
    values[name] = value;
  }
  return values;
}
