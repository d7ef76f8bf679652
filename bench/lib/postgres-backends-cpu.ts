import { childrenOf, cpuMsOf, titleOf } from "./proc-cpu.js";

export interface BackendsCpu {
  /** CPU ms the backends of the watched database used during the window. */
  ownMs: number;
  /** How many such backends were seen. */
  backends: number;
}

/**
 * The CPU time the Postgres backends serving one database use over a window,
 * read from /proc (the server must run on this machine). A pool opens and
 * closes connections as it goes, so the postmaster's children are polled
 * every `intervalMs`: a backend counts from the reading before the window
 * (from zero when it was forked during it, its start-up included) to its
 * last reading. A backend that exits between two readings loses what it
 * used since the last one; pools close connections only after they idled
 * (pg's default: 10 s), so that is next to nothing.
 */
export function watchBackendsCpu({
  postmasterPid,
  databaseName,
  ignorePids = [],
  intervalMs = 200,
}: {
  postmasterPid: number;
  databaseName: string;
  /** The bench's own connection, should it be on the same database. */
  ignorePids?: number[];
  intervalMs?: number;
}): { stop(): BackendsCpu } {
  const mark = ` ${databaseName} `;
  const own = new Map<number, { first: number; last: number }>();

  const poll = (initial: boolean) => {
    for (const pid of childrenOf(postmasterPid)) {
      if (ignorePids.includes(pid)) continue;
      const title = titleOf(pid);
      const cpu = cpuMsOf(pid);
      if (title === null || cpu === null || !title.includes(mark)) continue;
      const seen = own.get(pid);
      if (seen) seen.last = cpu;
      else own.set(pid, { first: initial ? cpu : 0, last: cpu });
    }
  };
  poll(true);
  const timer = setInterval(() => poll(false), intervalMs);
  return {
    stop() {
      clearInterval(timer);
      poll(false);
      return { ownMs: [...own.values()].reduce((sum, b) => sum + b.last - b.first, 0), backends: own.size };
    },
  };
}
