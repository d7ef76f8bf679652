/** What the overload guard makes of the event loop: `warming` at start (nothing is refused), then `normal` or `overloaded`. */
export type LoadState = "warming" | "normal" | "overloaded";

export interface LoadJudgeOptions {
  /** Lag (ms) above which a sample counts as overloaded; below half of it, as healthy. */
  maxDelayMs: number;
  /** Samples in a row it takes to become overloaded, and healthy samples in a row to stop being so. @default 3 */
  samples?: number;
  /** Samples after which a start is over even if the loop never was healthy `samples` times in a row. @default 30 */
  graceSamples?: number;
}

export interface LoadJudge {
  readonly state: LoadState;
  /** One sample of the event loop's lag, in ms; returns the state it leaves. */
  add(lagMs: number): LoadState;
}

/**
 * Decides on a sustained signal, with hysteresis: one slow moment (a long
 * synchronous stretch, a collection) is one sample and changes nothing;
 * `samples` lagging samples in a row make the process overloaded, and it
 * stays so until as many samples in a row are below half the threshold, so
 * it does not flap around the line. A start (compiling, opening the
 * database, a busy machine's first seconds) is not judged: the guard arms
 * once the loop has been healthy `samples` times in a row, or after
 * `graceSamples`, whichever comes first.
 */
export function createLoadJudge({ maxDelayMs, samples = 3, graceSamples = 30 }: LoadJudgeOptions): LoadJudge {
  let state: LoadState = "warming";
  let seen = 0;
  let lagging = 0;
  let healthy = 0;
  return {
    get state() {
      return state;
    },
    add(lagMs) {
      seen++;
      lagging = lagMs > maxDelayMs ? lagging + 1 : 0;
      healthy = lagMs < maxDelayMs / 2 ? healthy + 1 : 0;
      if (state === "warming" && (healthy >= samples || seen >= graceSamples)) state = "normal";
      if (state === "normal" && lagging >= samples) state = "overloaded";
      else if (state === "overloaded" && healthy >= samples) state = "normal";
      return state;
    },
  };
}
