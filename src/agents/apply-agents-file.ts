import { AppError } from "../errors.js";
import type { Services } from "../services.js";
import type { Configuration } from "../store/schema.js";
import { settleConfiguration } from "../conversations/settle-configuration.js";
import { agentsFileError } from "./agents-file.js";
import { changeAgent, versionOf } from "./agent-service.js";

/** An entry of `AGENTS_FILE`, checked: its tenant (default `default`), name and the fields of `POST /agents`. */
export type AgentsFileEntry = Configuration & {
  name: string;
  tenant?: string | undefined;
  description?: string | null | undefined;
};

/**
 * Writes `AGENTS_FILE`'s agents, at every start: a new one at version 1, a
 * changed one as its next version, an unchanged one not at all. Each entry
 * is first checked as `POST /agents` checks a body (tools, models,
 * settings); a problem stops the start, named by entry and field. The
 * agents it names become read-only over HTTP; those it no longer names
 * become writable again.
 */
export async function applyAgentsFile(
  services: Services,
  { file, entries }: { file: string | null; entries: AgentsFileEntry[] },
): Promise<void> {
  if (file === null) return;
  const { store } = services;
  for (const [i, { tenant = "default", name, ...fields }] of entries.entries()) {
    const next = versionOf(fields);
    await settleConfiguration(services, tenant, next.configuration).catch((err: unknown) => {
      if (!(err instanceof AppError)) throw err;
      const field = typeof err.details.field === "string" ? err.details.field.replace(/^body\./, ".") : "";
      throw agentsFileError(file, `agents[${i}]${field}`, err.message);
    });
    // Several processes may start together: one writes the version, the others find it written.
    for (let attempt = 1; ; attempt++) {
      try {
        const agent = await store.agents.get(tenant, name);
        if (!agent) {
          if (await store.agents.create({ tenant, name, fromFile: true, ...next })) break;
          throw new AppError("version_conflict", `agent ${name} was created meanwhile`);
        }
        if (!agent.fromFile) await store.agents.mark(agent, { fromFile: true });
        await changeAgent(services, { agent, from: agent.version, next });
        break;
      } catch (err) {
        if (attempt >= 3 || !(err instanceof AppError && err.code === "version_conflict")) throw err;
      }
    }
  }
  await store.agents.releaseFromFile(entries.map(({ tenant = "default", name }) => ({ tenant, name })));
}
