import { parseArgs } from "node:util";
import { runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { openDatabase } from "../store/db.js";
import { explainDatabaseError } from "../store/explain-database-error.js";
import { TENANT_NAME, type ApiKeyInfo } from "../store/key-repository.js";
import { createStore } from "../store/store.js";

const USAGE =
  "usage: npm run keys -- create --tenant <name> [--name <label>] | list [--tenant <name>] | revoke <key_id>";

/**
 * `npm run keys`: API keys made, listed and revoked in DATABASE_URL, or in
 * the embedded database in DATA_DIR (while loopd does not hold it: then use
 * the admin routes). A new key is printed once; only its SHA-256 is kept.
 */
await runCli("keys cannot run:", async () => {
  const { values, positionals } = parseArgs({
    options: { tenant: { type: "string" }, name: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  const [command, ...rest] = positionals;
  const tenant = values.tenant?.trim();
  if (tenant !== undefined && !TENANT_NAME.test(tenant))
    throw new OperatorError(
      `--tenant ${JSON.stringify(tenant)} must be 1–64 of A-Z, a-z, 0-9, _, . and -, starting with a letter or digit`,
    );
  if (command === "create" && tenant === undefined) throw new OperatorError(`create needs --tenant <name>; ${USAGE}`);
  if (command === "revoke" && rest.length !== 1)
    throw new OperatorError(`revoke needs the key's id (see list); ${USAGE}`);
  if (command !== "create" && command !== "list" && command !== "revoke") throw new OperatorError(USAGE);

  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.database.url,
    directUrl: config.database.directUrl,
    dataDir: config.database.dataDir,
    program: "npm run keys",
    ...config.database.pool,
  });
  try {
    await database.migrate().catch((err: unknown) => {
      throw new OperatorError(explainDatabaseError(err, config.database), { cause: err });
    });
    const { keys } = createStore(database);
    if (command === "create") {
      const { key, row } = await keys.create({ tenant: tenant!, name: values.name?.trim() || null });
      console.log(
        `key ${row.id} for tenant ${row.tenantId}${row.name ? ` (${row.name})` : ""}; shown this once, keep it:`,
      );
      console.log(key);
      return 0;
    }
    if (command === "list") {
      console.log(table(await keys.list({ tenant })));
      return 0;
    }
    const revoked = await keys.revoke(rest[0]!);
    if (!revoked) throw new OperatorError(`no key ${rest[0]} (npm run keys -- list shows them)`);
    console.log(
      `key ${revoked.id} of tenant ${revoked.tenantId} revoked at ${revoked.revokedAt!.toISOString()}: requests with it are refused from now on`,
    );
    return 0;
  } finally {
    await database.close();
  }
});

function table(rows: ApiKeyInfo[]): string {
  const lines = [
    ["id", "tenant", "name", "created", "last used", "revoked"],
    ...rows.map((k) => [k.id, k.tenantId, k.name ?? "", iso(k.createdAt), iso(k.lastUsedAt), iso(k.revokedAt)]),
  ];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines
    .map((l) =>
      l
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function iso(d: Date | null): string {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : "-";
}
