/**
 * The abort reason for stopping a run without ending it: its process is going
 * away (shutdown) or no longer owns it (lease lost). Unlike a client's cancel,
 * the calls it cuts short are answered "interrupted", and the run is left for
 * another process to resume.
 */
export class RunInterruption extends Error {
  override readonly name: string = "RunInterruption";
}

export const isInterruption = (signal: AbortSignal | undefined): boolean => signal?.reason instanceof RunInterruption;

/**
 * The abort reason of a run a new message interrupts (`on_busy:
 * "interrupt"`): it ends `cancelled` with `stop_reason: "superseded"`, and
 * the calls it cuts short are answered so.
 */
export class Superseded extends Error {
  override readonly name = "Superseded";
}

export const isSuperseded = (signal: AbortSignal | undefined): boolean => signal?.reason instanceof Superseded;

/** The abort reason of a cancel asked with `reason` (`runs.cancel_reason`; the payload of `loopd_run_cancel` after the run id). */
export const cancelReasonOf = (reason: string | null | undefined): Superseded | undefined =>
  reason === "superseded" ? new Superseded("a new message interrupted the run") : undefined;

/** The process is stopping: its runs stop at their next safe point and are left for the next process. */
export class ShutdownSignal extends RunInterruption {
  override readonly name = "ShutdownSignal";
}

/** This process no longer owns the run (another took it over, or it ended): it must not write to it. */
export class LeaseLost extends RunInterruption {
  override readonly name = "LeaseLost";
}
