/** How a tool set's server is reached: a program loopd starts (`stdio`), or an address it calls (`http`). */
export const SERVER_TRANSPORTS = ["stdio", "http"] as const;
/** Where a server is in its life: its first connection, up, started again after it dropped, not started yet. */
export const SERVER_STATES = ["starting", "ready", "restarting", "failed"] as const;
export type ToolServerState = (typeof SERVER_STATES)[number];

/** `GET /tools/servers`'s row, and what only `ADMIN_TOKEN` holders see besides. */
export interface ToolServerStatus {
  name: string;
  transport: (typeof SERVER_TRANSPORTS)[number];
  status: ToolServerState;
  tools: number;
  restarts: number;
  /** The code it last exited with (while it is down); null when it is up, did not exit, or a signal ended it. */
  exit_code: number | null;
  /** What went wrong last, in loopd's words ("exited with code 1"): never what the server wrote. */
  last_error: string | null;
  /** The last line it wrote to stderr before it went (redacted): it may hold any tenant's tool arguments, so it is for the log and admins only. */
  stderr: string | null;
}
