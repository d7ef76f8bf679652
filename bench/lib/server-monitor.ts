import pg from "pg";
import { parentPidOf, titleOf } from "./proc-cpu.js";

/** The bench's own connection to a Postgres server, for figures the server keeps: its WAL position, its processes. */
export interface ServerMonitor {
  /** The postmaster, when the server runs on this machine (its backends are then readable in /proc); null otherwise. */
  postmasterPid: number | null;
  /** This connection's backend, not to be counted as anyone's work. */
  backendPid: number;
  /** Where the next WAL record will go. */
  walInsertLsn(): Promise<string>;
  /** WAL bytes written since `lsn`, by anyone on the server. */
  walBytesSince(lsn: string): Promise<number>;
  /** Starts every measured window from the same state: right after a checkpoint, each page's first change logs a full-page image. */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the monitor on `serverUrl`'s own database (not the one measured, so its statements are not counted there). */
export async function openServerMonitor(serverUrl: string): Promise<ServerMonitor> {
  const client = new pg.Client({ connectionString: serverUrl });
  // Terminated by someone else's work on a shared server: the next query says so, not an unhandled 'error' that ends the bench.
  client.on("error", () => {});
  await client.connect();
  const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
  const backendPid = rows[0]!.pid;
  return {
    postmasterPid: localPostmaster(backendPid),
    backendPid,
    async walInsertLsn() {
      return (await client.query<{ lsn: string }>("select pg_current_wal_insert_lsn() as lsn")).rows[0]!.lsn;
    },
    async walBytesSince(lsn) {
      const { rows: diff } = await client.query<{ bytes: string }>(
        "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1) as bytes",
        [lsn],
      );
      return Number(diff[0]!.bytes);
    },
    async checkpoint() {
      await client.query("checkpoint");
    },
    close: () => client.end(),
  };
}

/** The server's backend pid is a process here only when the server runs here: its title says so. */
function localPostmaster(backendPid: number): number | null {
  const title = titleOf(backendPid);
  if (title === null || !title.startsWith("postgres:")) return null;
  return parentPidOf(backendPid);
}
