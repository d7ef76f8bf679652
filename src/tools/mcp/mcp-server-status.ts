export type McpServerState = "starting" | "ready" | "restarting" | "failed";

/** `GET /tools/servers`'s row, and what only `ADMIN_TOKEN` holders see besides. */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  status: McpServerState;
  tools: number;
  restarts: number;
  /** The code it last exited with (while it is down); null when it is up, did not exit, or a signal ended it. */
  exit_code: number | null;
  /** What went wrong last, in loopd's words ("exited with code 1"): never what the server wrote. */
  last_error: string | null;
  /** The last line it wrote to stderr before it went (redacted): it may hold any tenant's tool arguments, so it is for the log and admins only. */
  stderr: string | null;
}
