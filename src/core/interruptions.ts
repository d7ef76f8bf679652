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
