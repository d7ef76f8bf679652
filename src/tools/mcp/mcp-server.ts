import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { describeError } from "../../errors.js";
import { causeCode } from "../cause-code.js";
import { ToolErrorResult } from "../define-tool.js";
import type { McpServerEntry } from "./mcp-server-entry.js";
import type { ToolSandbox } from "../sandbox/tool-sandbox.js";
import { CONNECTION_LOST_REASON } from "./capped-fetch.js";
import { ChildProcessTransport } from "./child-process-transport.js";
import {
  HANDSHAKE_TIMEOUT_MS,
  isConnectionFailure,
  lastLine,
  McpServerExited,
  messageOf,
  openMcpConnection,
  streamProblemOf,
} from "./mcp-connection.js";
import type { McpCallResult } from "./mcp-result.js";
import { mcpToolsOf, type ListedTool, type McpTool } from "./mcp-tool.js";
import type { ToolServerState, ToolServerStatus } from "../tool-server-status.js";

/** Pages of `tools/list` followed, and tools kept, at most. */
const MAX_LIST_PAGES = 100;
const MAX_TOOLS = 1_000;
/** A server that stayed up this long starts its backoff over after it drops. */
const STABLE_MS = 30_000;
/** The least time between two listings of one server's tools. */
const RELIST_PAUSE_MS = 1_000;
/** Room past the tool timeout for the SDK's own timer: loopd's fires first and says so. */
const TIMEOUT_MARGIN_MS = 1_000;

export interface McpServer {
  readonly name: string;
  /** Connects in the background; never throws. */
  start(): void;
  status(): ToolServerStatus;
  /** Its tools as last listed (kept while it restarts, answering "unavailable"). */
  tools(): readonly McpTool[];
  close(): Promise<void>;
}

export interface McpServerOptions {
  /** The tool timeout for servers without a `timeout_ms` of their own (config `TOOL_TIMEOUT_MS`). */
  defaultTimeoutMs: number;
  /** The longest message read from the server. */
  maxMessageBytes: number;
  /** Values of loopd's environment (`PATH`, `HOME`, `LANG` are passed on). */
  env: Record<string, unknown>;
  log: Logger;
  /** Where a stdio server runs (see `chooseToolSandbox`). @default none */
  sandbox?: ToolSandbox | undefined;
  /** Takes secrets out of what a server said (its `last_error` is shown to API clients, its stderr to admins). */
  redact: (text: string) => string;
  /** Its tools or its status changed. */
  onChange(): void;
  /** It is being started again after it dropped or failed. */
  onRestart(): void;
  /** @default 1000 and 30000 */
  backoff?: { firstMs: number; maxMs: number };
}

/**
 * One MCP server of `TOOLS_FILE`, through the official SDK: started in the
 * background, its tools listed (every page) and listed again when it says
 * they changed, its calls made with the tool timeout and cancelled the MCP
 * way (`notifications/cancelled`) on timeout or cancel. When it exits or its
 * connection drops it is started again with backoff (1 s doubling to 30 s);
 * meanwhile, and for a call in flight when it went, its tools answer an
 * error result that says it is unavailable and why.
 */
export function createMcpServer(entry: McpServerEntry, options: McpServerOptions): McpServer {
  const { log, backoff = { firstMs: 1_000, maxMs: 30_000 } } = options;
  const timeoutMs = entry.timeout_ms ?? options.defaultTimeoutMs;
  let state: ToolServerState = "starting";
  let closed = false;
  let client: Client | null = null;
  let listed: McpTool[] = [];
  let restarts = 0;
  let delayMs = backoff.firstMs;
  let readySince: number | null = null;
  let everReady = false;
  let timer: NodeJS.Timeout | null = null;
  /** Why it is down, short ("exited with code 1"): `last_error`, and what its tools answer meanwhile. */
  let downReason = "starting";
  let lastError: string | null = null;
  /** How it last ended and what it wrote last, kept apart from `lastError`: stderr is never shown to tenants. */
  let exitCode: number | null = null;
  let lastSaid: string | null = null;
  let listing: Promise<void> | null = null;
  let listAgain = false;
  /** The transport of a connection being made: closed with the server, even mid-handshake. */
  let opening: Transport | null = null;

  const changed = (next: ToolServerState) => {
    state = next;
    options.onChange();
  };

  async function connect(): Promise<void> {
    let opened: { client: Client; transport: Transport } | null = null;
    try {
      opened = await openMcpConnection(entry, {
        env: options.env,
        maxMessageBytes: options.maxMessageBytes,
        sandbox: options.sandbox,
        closed: () => closed,
        opening: (transport) => (opening = transport),
      });
      if (closed) return void (await opened.client.close());
      const { client: c, transport } = opened;
      c.onclose = () => {
        if (client !== c) return;
        const exit = transport instanceof ChildProcessTransport ? transport.exitReason : null;
        const child = transport instanceof ChildProcessTransport ? transport : null;
        dropped(exit ?? "its connection closed", { said: child?.stderr, exitCode: child?.exitCode });
      };
      c.onerror = (err) => {
        log.debug({ err: describeError(err), server: entry.name }, "MCP server error");
        // A stream cut past the size cap, or that broke (HTTP): its calls are lost; start again.
        const problem = streamProblemOf(err, transport);
        if (problem) dropped(problem);
      };
      c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        void relist(c).catch((err) =>
          log.warn(
            { err: describeError(err), server: entry.name },
            "could not list the tools of an MCP server again; its last list is kept",
          ),
        );
      });
      client = c;
      await relist(c);
      everReady = true;
      readySince = Date.now();
      lastError = exitCode = lastSaid = null;
      changed("ready");
      log.info({ server: entry.name, tools: listed.length }, "MCP server ready");
    } catch (err) {
      if (closed) return;
      client = null;
      await opened?.client.close().catch(() => {});
      const exited = err instanceof McpServerExited ? err : null;
      // A child that exited: its reason alone (its stderr is kept apart); other failures are loopd's or the SDK's words.
      went({ reason: exited?.reason ?? messageOf(err), said: exited?.said, exitCode: exited?.exitCode });
      log.warn(
        { server: entry.name, error: lastError, stderr: lastSaid },
        "MCP server could not be started; trying again",
      );
      changed(everReady ? "restarting" : "failed");
      schedule();
    }
  }

  /** Why it is down (shown to tenants and in its tools' answers), and, apart, what it wrote last (the log and admins only). */
  function went({
    reason,
    said,
    exitCode: code,
  }: {
    reason: string;
    said?: string | undefined;
    exitCode?: number | null | undefined;
  }) {
    downReason = lastError = options.redact(reason);
    lastSaid = said ? options.redact(lastLine(said)) : null;
    exitCode = code ?? null;
  }

  function dropped(reason: string, exit: { said?: string | undefined; exitCode?: number | null | undefined } = {}) {
    if (closed || client === null) return;
    const gone = client;
    client = null;
    void gone.close().catch(() => {});
    went({ reason, ...exit });
    log.warn({ server: entry.name, error: lastError, stderr: lastSaid }, "MCP server went away; starting it again");
    changed("restarting");
    schedule();
  }

  function schedule() {
    if (closed || timer) return;
    if (readySince !== null && Date.now() - readySince >= STABLE_MS) delayMs = backoff.firstMs;
    readySince = null;
    const wait = delayMs;
    delayMs = Math.min(delayMs * 2, backoff.maxMs);
    timer = setTimeout(() => {
      timer = null;
      restarts++;
      options.onRestart();
      void connect();
    }, wait);
    timer.unref();
  }

  /** Lists the tools again; a call while one listing runs makes it list once more after it. */
  function relist(c: Client): Promise<void> {
    if (listing) {
      listAgain = true;
      return listing;
    }
    listing = (async () => {
      for (let first = true; first || listAgain; first = false) {
        // A server that says its list changed while it is being read is read again, but not at once: no loop of lists.
        if (!first) await new Promise((resolve) => setTimeout(resolve, RELIST_PAUSE_MS).unref());
        listAgain = false;
        if (closed || (client !== c && !first)) return;
        listed = mcpToolsOf(entry, await listAll(c), { call, available: () => state === "ready", timeoutMs });
        options.onChange();
      }
    })().finally(() => (listing = null));
    return listing;
  }

  async function listAll(c: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_TOOLS; page++) {
      const result = await c.request(
        { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
        ListToolsResultSchema,
        { timeout: HANDSHAKE_TIMEOUT_MS },
      );
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools.slice(0, MAX_TOOLS);
  }

  const unavailable = () =>
    new ToolErrorResult(
      `the MCP server ${entry.name} is unavailable (${downReason}); try again later or use another tool`,
    );

  async function call(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    const c = client;
    if (!c || state !== "ready") throw unavailable();
    try {
      const result = await c.request(
        { method: "tools/call", params: { name: tool, arguments: input } },
        CallToolResultSchema,
        { signal, timeout: timeoutMs + TIMEOUT_MARGIN_MS },
      );
      return result;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof ToolErrorResult) throw err;
      // It died while the call was in flight (the SDK ends every pending request when the connection closes).
      if (client !== c) throw unavailable();
      if (isConnectionFailure(err)) {
        dropped(
          err instanceof McpError
            ? CONNECTION_LOST_REASON
            : `its connection failed (${causeCode(err) ?? (err as Error).message})`,
        );
        throw unavailable();
      }
      throw new ToolErrorResult(`${tool} failed on the MCP server ${entry.name}: ${messageOf(err)}`);
    }
  }

  return {
    name: entry.name,
    start: () => void connect(),
    status: () => ({
      name: entry.name,
      transport: entry.command ? "stdio" : "http",
      status: state,
      tools: listed.length,
      restarts,
      exit_code: exitCode,
      last_error: lastError,
      stderr: lastSaid,
    }),
    tools: () => listed,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await Promise.all([c?.close().catch(() => {}), opening?.close().catch(() => {})]);
    },
  };
}
