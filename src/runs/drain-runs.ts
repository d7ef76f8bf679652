import type { Services } from "../services.js";
import { ShutdownSignal } from "../core/interruptions.js";
import type { LocalRun } from "./local-run.js";

/**
 * Shutdown: lets the running steps finish for up to `timeoutMs`, then stops
 * the rest at their next safe point without ending them (a tool cut short is
 * answered "interrupted"), and releases their leases so a process starting
 * later resumes them at once.
 */
export async function drainRuns({
  services: { store, instanceId },
  active,
  timeoutMs,
}: {
  services: Services;
  active: ReadonlyMap<string, LocalRun>;
  timeoutMs: number;
}): Promise<void> {
  // Until none is left: a run may start (from a request under way) while we wait.
  const all = async () => {
    while (active.size > 0) await Promise.allSettled([...active.values()].map((a) => a.done));
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    all().then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    for (const { controller } of active.values()) controller.abort(new ShutdownSignal("server shutting down"));
    await all();
  }
  await store.runs.releaseLeases(instanceId).catch(() => {});
}
