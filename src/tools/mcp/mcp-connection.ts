import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { causeCode } from "../cause-code.js";
import type { McpServerEntry } from "./mcp-server-entry.js";
import type { ToolSandbox } from "../sandbox/tool-sandbox.js";
import { cappedFetch, CONNECTION_LOST, CONNECTION_LOST_REASON, TOO_LONG } from "./capped-fetch.js";
import { ChildProcessTransport } from "./child-process-transport.js";

/** The names of loopd's own environment that an MCP child gets, besides its entry's `env`. */
const INHERITED_ENV = ["PATH", "HOME", "LANG"] as const;
/** How long connecting (the initialize handshake) and listing may take. */
export const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * A connected, initialized client of an MCP server: over stdio (a child
 * with `PATH`, `HOME`, `LANG` and the entry's `env` only), or over
 * Streamable HTTP, falling back to the old HTTP+SSE transport for a server
 * that answered but not as Streamable HTTP. Every transport's answers are
 * capped at `maxBytes`. `opening` is told each transport before its
 * handshake (to close it if the server is closed meanwhile); a child that
 * could not start or exited throws `McpServerExited`.
 */
export async function openMcpConnection(
  entry: McpServerEntry,
  {
    env,
    maxMessageBytes,
    closed,
    opening,
    sandbox,
  }: {
    env: Record<string, unknown>;
    maxMessageBytes: number;
    closed: () => boolean;
    opening: (transport: Transport | null) => void;
    sandbox?: ToolSandbox | undefined;
  },
): Promise<{ client: Client; transport: Transport }> {
  const transports: (() => Transport)[] = entry.command
    ? [
        () =>
          new ChildProcessTransport({
            command: entry.command!,
            args: entry.args,
            env: childEnv(entry, env),
            cwd: entry.cwd,
            sandbox,
            maxMessageBytes,
          }),
      ]
    : [
        () =>
          new StreamableHTTPClientTransport(new URL(entry.url!), {
            requestInit: { headers: entry.headers },
            fetch: cappedFetch(maxMessageBytes),
          }),
        () =>
          new SSEClientTransport(new URL(entry.url!), {
            requestInit: { headers: entry.headers },
            fetch: cappedFetch(maxMessageBytes),
          }),
      ];
  let first: unknown;
  for (const make of transports) {
    if (closed()) break;
    const c = new Client({ name: "loopd", version: "0.1.0" }, { capabilities: {} });
    const transport = make();
    opening(transport);
    try {
      await c.connect(transport, { timeout: HANDSHAKE_TIMEOUT_MS });
      return { client: c, transport };
    } catch (err) {
      first ??= err;
      await c.close().catch(() => {});
      if (transport instanceof ChildProcessTransport && transport.exitReason) {
        throw new McpServerExited(
          { reason: transport.exitReason, exitCode: transport.exitCode, said: transport.stderr },
          { cause: err },
        );
      }
      // Only a server that answered, but not as Streamable HTTP, is tried over SSE.
      if (!(err instanceof StreamableHTTPError)) break;
    } finally {
      opening(null);
    }
  }
  throw first;
}

/**
 * A stdio server that ended before its handshake: how (loopd's own words, shown to every tenant) apart from what it
 * last wrote to stderr (which may hold another tenant's tool arguments: for the log and `ADMIN_TOKEN` holders only).
 */
export class McpServerExited extends Error {
  override readonly name = "McpServerExited";
  readonly reason: string;
  readonly exitCode: number | null;
  readonly said: string;
  constructor(
    { reason, exitCode, said }: { reason: string; exitCode: number | null; said: string },
    options?: ErrorOptions,
  ) {
    super(`${reason}${said ? `: ${lastLine(said)}` : ""}`, options);
    this.reason = reason;
    this.exitCode = exitCode;
    this.said = said;
  }
}

function childEnv(entry: McpServerEntry, parent: Record<string, unknown>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = parent[name];
    if (typeof value === "string") env[name] = value;
  }
  return { ...env, ...entry.env };
}

/** A network failure under an HTTP transport (refused, reset, a stream cut before its answer), or a session the server no longer knows. */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404;
  if (err instanceof McpError) return err.code === CONNECTION_LOST;
  return err instanceof TypeError && causeCode(err) !== undefined;
}

/**
 * What a transport's error says, when it means the connection's answers are
 * lost: a stream cut past the size cap, or (on the old HTTP+SSE transport,
 * where every answer comes on one stream) that stream broken.
 */
export function streamProblemOf(err: Error, transport: Transport): string | null {
  if (err.message.includes(TOO_LONG)) return "it sent a message longer than loopd reads";
  if (transport instanceof SSEClientTransport && /^SSE error/.test(err.message)) return CONNECTION_LOST_REASON;
  return null;
}

/** An error's message without the SDK's `MCP error -32603: ` in front. */
export function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (err instanceof McpError ? message.replace(/^MCP error -?\d+: /, "") : message).slice(0, 500);
}

export const lastLine = (text: string) => text.trim().split("\n").at(-1)!.slice(0, 300);
