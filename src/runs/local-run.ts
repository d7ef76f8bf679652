/** A run executing in this process: what stops it, and when it is over. */
export interface LocalRun {
  controller: AbortController;
  done: Promise<void>;
}
