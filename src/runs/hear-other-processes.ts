import { cancelReasonOf } from "../core/interruptions.js";
import type { Broadcast } from "../store/broadcast.js";
import type { RunManager } from "./run-manager.js";
import type { RunSignals } from "./run-signals.js";

/** What the other loopd processes on the database say about runs: commits, queued runs, cancels. */
export function hearOtherProcesses(
  { broadcast, signals }: { broadcast: Broadcast; signals: RunSignals },
  runs: RunManager,
) {
  // A run of this process signals its readers itself when it commits: its echo through LISTEN would wake them twice.
  broadcast.on("loopd_run_events", (key) => runs.isLocal(key) || signals.notify(key));
  // "<run id> <conversation id>": a run was queued behind that run.
  broadcast.on("loopd_run_queued", (payload) => {
    const [runId = "", conversationId = ""] = payload.split(" ");
    runs.noteQueued(runId, conversationId);
  });
  // "<run id>" or "<run id> superseded".
  broadcast.on("loopd_run_cancel", (payload) => {
    const [runId = "", reason] = payload.split(" ");
    runs.cancelLocal(runId, cancelReasonOf(reason));
  });
}
