import type { Config } from "../config.js";
import { OperatorError } from "../errors.js";
import { agentOfApi, type AgentUnderTest } from "../evals/agent-under-test.js";
import { DEFAULT_TENANT } from "../http/plugins/request-tenant.js";
import { openDatabase } from "../store/db.js";
import { createStore } from "../store/store.js";
import { printable } from "./run-cli.js";
import type { AgentRef } from "./model-options.js";

/** How long a server may take to answer. */
const ANSWER_TIMEOUT_MS = 30_000;

/** An `--agent` that names no agent or version of the database: a usage error (exit 2), not a fault. */
export class UnknownAgent extends Error {}

/**
 * The agents' versions `--agent` names, read where the other commands read
 * (tenant `default`): from `DATABASE_URL` or the embedded database in
 * `DATA_DIR`, or through the API of the server at `serverUrl` (the one that
 * holds that embedded database).
 */
export async function readAgentVersions({
  refs,
  config,
  serverUrl,
}: {
  refs: AgentRef[];
  config: Config;
  serverUrl: string | undefined;
}): Promise<AgentUnderTest[]> {
  if (serverUrl) return Promise.all(refs.map((ref) => overHttp(serverUrl, ref)));
  const where = config.database.url ? "DATABASE_URL" : config.database.dataDir;
  const database = await openDatabase({
    databaseUrl: config.database.url,
    directUrl: config.database.directUrl,
    dataDir: config.database.dataDir,
    program: "npm run eval",
    mustExist: true,
  });
  try {
    await database.migrate();
    const store = createStore(database);
    const found: AgentUnderTest[] = [];
    for (const ref of refs) {
      const agent = await store.agents.get(DEFAULT_TENANT, ref.name, ref.version);
      if (!agent) {
        const latest = ref.version === undefined ? null : await store.agents.get(DEFAULT_TENANT, ref.name);
        throw new UnknownAgent(unknown(ref, latest?.version, where));
      }
      found.push({ name: agent.name, version: agent.at.version, configuration: agent.at.configuration });
    }
    return found;
  } finally {
    await database.close();
  }
}

const refText = (ref: AgentRef) => `${ref.name}${ref.version === undefined ? "" : `@${ref.version}`}`;

const unknown = (ref: AgentRef, latest: number | undefined, where: string) =>
  latest === undefined
    ? `--agent ${refText(ref)}: agent ${ref.name} does not exist in ${where}`
    : `--agent ${refText(ref)}: agent ${ref.name} has no version ${ref.version} (its latest is ${latest})`;

async function overHttp(url: string, ref: AgentRef): Promise<AgentUnderTest> {
  const route = `agents/${ref.name}${ref.version === undefined ? "" : `/versions/${ref.version}`}`;
  const base = new URL(url.endsWith("/") ? url : `${url}/`);
  let res: Response;
  try {
    res = await fetch(new URL(route, base), { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  } catch (err) {
    throw new OperatorError(`cannot reach the loopd server at ${url}: ${(err as Error).message}; is it still running?`);
  }
  if (res.status === 404) {
    const latest = ref.version === undefined ? undefined : await latestOverHttp(base, ref.name);
    throw new UnknownAgent(unknown(ref, latest, `the loopd server at ${url}`));
  }
  if (!res.ok)
    throw new OperatorError(
      `the loopd server at ${url} answered ${res.status} to GET /${route}: ${printable((await res.text()).slice(0, 300))}`,
    );
  const agent = agentOfApi((await res.json()) as Record<string, unknown>);
  // The URL came from a lock file anyone may write: its answer must be the agent asked for.
  if (agent.name !== ref.name || (ref.version !== undefined && agent.version !== ref.version))
    throw new OperatorError(
      `the loopd server at ${url} answered another agent than ${refText(ref)}: it is not to be trusted`,
    );
  return agent;
}

async function latestOverHttp(base: URL, name: string): Promise<number | undefined> {
  const res = await fetch(new URL(`agents/${name}`, base), { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  return res.ok ? ((await res.json()) as { version: number }).version : undefined;
}
