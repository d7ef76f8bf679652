import { realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { blank } from "../../util/env-values.js";
import { SECRET_NAME } from "../../util/redact.js";
import { SECRET_FILE_NAMES } from "../../config/secret-files.js";

/** The variables of the tool sandbox and of who may run commands (composed into config.ts's). */
export const sandboxVariables = {
  /** `bwrap`, `user` or `none`; unset: bwrap when it works here, else `user` when loopd runs as root. */
  TOOL_SANDBOX: z.preprocess((v) => (blank(v) ? undefined : v), z.enum(["bwrap", "user", "none"]).optional()),
  /** When loopd runs as root: the user `run_command` runs as (bwrap is started as that user too: never root), and stdio MCP servers under `TOOL_SANDBOX=user`. */
  TOOL_RUN_AS_USER: z.preprocess(
    (v) => (blank(v) ? undefined : v),
    z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "must be a user name or id")
      .default("nobody"),
  ),
  /** `acme,globex`: the tenants offered `run_command`; unset: every tenant. */
  RUN_COMMAND_TENANTS: z.preprocess(
    (v) => (blank(v) ? undefined : v),
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((t) => t.trim())
          .filter(Boolean),
      )
      .optional(),
  ),
};

type SandboxVariables = z.output<z.ZodObject<typeof sandboxVariables>> & {
  DATA_DIR: string;
  TOOLS_FILE?: string | undefined;
  PRICES_FILE?: string | undefined;
};

/**
 * `hidden`: what of loopd's a confined tool must not read, besides its
 * environment and `/proc`: the embedded database's folder, the `.env` loopd
 * read, the files its settings name (`TOOLS_FILE` may hold tokens; any
 * `*_FILE` variable, as Docker and Kubernetes secrets are passed), and
 * `/run/secrets`.
 */
export function sandboxSettingsOf(
  e: SandboxVariables,
  raw: Record<string, unknown>,
  { cwd = process.cwd() }: { cwd?: string } = {},
) {
  // A secret's file: loopd's own (`ADMIN_TOKEN_FILE`…) or any `*_FILE` named like a secret (`DB_PASSWORD_FILE`); not every `*_FILE` (`SSL_CERT_FILE` is the CA bundle tools need).
  const isSecretFile = (name: string) =>
    name.endsWith("_FILE") && (SECRET_FILE_NAMES.includes(name.slice(0, -5)) || SECRET_NAME.test(name.slice(0, -5)));
  const files = Object.entries(raw).flatMap(([name, value]) =>
    isSecretFile(name) && typeof value === "string" && value.trim() !== "" ? [value] : [],
  );
  const hidden = [
    e.DATA_DIR,
    path.join(cwd, ".env"),
    ...files,
    e.TOOLS_FILE,
    e.PRICES_FILE,
    "/run/secrets",
    ...DATABASE_SOCKET_DIRS,
    socketDirOf(raw.DATABASE_URL),
  ]
    .flatMap((p) => (p ? [path.resolve(cwd, p)] : []))
    // One place under two names (/var/run is /run) is covered once, by its real name.
    .map((p) => {
      try {
        return realpathSync(p);
      } catch {
        return p;
      }
    });
  return {
    /** Null: chosen at start (see `chooseToolSandbox`). */
    mode: e.TOOL_SANDBOX ?? null,
    runAsUser: e.TOOL_RUN_AS_USER,
    hidden: [...new Set(hidden)],
    home: typeof raw.HOME === "string" && raw.HOME !== "" ? path.resolve(raw.HOME) : undefined,
    /** Null: every tenant is offered `run_command` (when it is enabled). */
    runCommandTenants: e.RUN_COMMAND_TENANTS ?? null,
  };
}

/**
 * Where Postgres puts its unix socket (Debian's, and the socket's other
 * common home): a tool that reached it would be loopd's database user under
 * `peer` or `trust` authentication, `DATABASE_URL` or not.
 */
const DATABASE_SOCKET_DIRS = ["/run/postgresql", "/var/run/postgresql"];

/** The socket folder a `DATABASE_URL` names (`?host=/path`, or a host that is a path), if any. */
function socketDirOf(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  // Not through URL: `postgres://user@/db?host=/path` (libpq's own form) has no host URL can parse.
  const param = /[?&]host=([^&#]+)/.exec(url)?.[1];
  const host = param ?? /^[a-z]+:\/\/(?:[^@/?#]*@)?([^/?#:]*)/i.exec(url)?.[1];
  if (!host) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(host);
  } catch {
    return undefined;
  }
  return decoded.startsWith("/") ? decoded : undefined;
}

export type SandboxSettings = ReturnType<typeof sandboxSettingsOf>;
