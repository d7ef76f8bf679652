import { Counter, type Registry } from "prom-client";

/**
 * The counters of a run that stops without ending: a pause for the
 * application (`requires_action`), a wait out an outage of every model
 * (`waiting`). Returns the counting function: false when the run ended.
 */
export function createPauseCounters(registers: Registry[]): (status: string) => boolean {
  const paused = new Counter({
    name: "loopd_run_pauses_total",
    help: "Times a run paused to wait for the application (requires_action)",
    registers,
  });
  const outageWaits = new Counter({
    name: "loopd_run_outage_waits_total",
    help: "Times a run parked to wait out an outage of every model (waiting, on_provider_outage: wait)",
    registers,
  });
  return (status) => {
    if (status === "requires_action") paused.inc();
    else if (status === "waiting") outageWaits.inc();
    else return false;
    return true;
  };
}
