import { describeError, findInCauseChain } from "../errors.js";
import { unopenedMessage } from "./embedded-folder.js";

/**
 * What went wrong opening the database, in words an operator can act on
 * (the driver's own text for a closed port is "Failed query: CREATE SCHEMA
 * …"). The URL is shown without its password.
 */
export function explainDatabaseError(
  err: unknown,
  { url: databaseUrl, dataDir }: { url: string | undefined; dataDir: string },
): string {
  const code = findInCauseChain(err, (e) => {
    const c = (e as { code?: unknown }).code;
    return typeof c === "string" ? c : undefined;
  });
  if (!databaseUrl) return unopenedMessage(dataDir, err);
  const url = safeUrl(databaseUrl);
  const where = url ? `${url.hostname}:${url.port || 5432}` : "the server";
  const name = url?.pathname.replace(/^\//, "") || "(default)";
  switch (code) {
    case "ECONNREFUSED":
      return `cannot reach PostgreSQL at ${where}: connection refused. Is the server running, and is DATABASE_URL's host and port right?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot reach PostgreSQL: the host ${url?.hostname ?? ""} in DATABASE_URL is not known`;
    case "ETIMEDOUT":
      return `cannot reach PostgreSQL at ${where}: the connection timed out`;
    case "3D000":
      return `the database "${name}" does not exist on ${where}: create it (e.g. createdb ${name}) or fix DATABASE_URL`;
    case "28P01":
    case "28000":
      return `PostgreSQL at ${where} refused the login for user "${url?.username ?? ""}": check the user and password in DATABASE_URL`;
    case "42501":
      return `the user in DATABASE_URL may not create loopd's tables in "${name}" on ${where}: grant it CREATE on the database`;
    default:
      return `PostgreSQL at ${where} (database "${name}") could not be migrated: ${describeError(err).message}`;
  }
}

function safeUrl(databaseUrl: string): URL | null {
  try {
    return new URL(databaseUrl);
  } catch {
    return null;
  }
}
