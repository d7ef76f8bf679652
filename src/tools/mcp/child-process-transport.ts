import { spawn, type ChildProcessByStdio } from "node:child_process";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { NO_SANDBOX, type ToolSandbox } from "../sandbox/tool-sandbox.js";

/** What a too-long message keeps of its start and its end, to find its id. */
const EDGE_BYTES = 256;
/** How much of the server's stderr is kept for its last error. */
const STDERR_BYTES = 2_048;
/** How long a server has to exit after its stdin closes and then after SIGTERM, before its group gets SIGKILL. */
const EXIT_GRACE_MS = 2_000;

export interface ChildProcessTransportOptions {
  command: string;
  args: readonly string[];
  /** The child's whole environment. */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Where it runs: confined, with its `cwd` (if it has one) the only folder it may write. @default none */
  sandbox?: ToolSandbox | undefined;
  /** The longest message read from the server; a longer one is skipped, and the request it answers gets an error. */
  maxMessageBytes: number;
}

/**
 * MCP over stdio, with the bounds the SDK's own stdio transport lacks: the
 * child runs confined by the sandbox (it cannot read loopd's environment or
 * files), in a process group of its own (an `npx` launcher and the
 * server under it are killed together), with exactly the environment given
 * (the SDK's adds the parent's USER, SHELL and others), and a message longer
 * than `maxMessageBytes` is never held whole: it is skipped as it streams by
 * and, when its id can be read off its edges, answered as a JSON-RPC error
 * so the call it belongs to ends at once. `exitReason` says how the child
 * ended ("exited with code 1").
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Set once the child has ended (or could not start). */
  exitReason: string | null = null;
  /** loopd asked it to stop (its stdin closed), and signalled it when it did not: an exit then is loopd's doing, unless it failed by itself. */
  private stopping = false;
  private signalled = false;
  /** The child's exit code; null while it runs, or when a signal ended it. */
  exitCode: number | null = null;
  private child: ChildProcessByStdio<Writable, Readable, Readable> | null = null;
  private chunks: Buffer[] = [];
  private length = 0;
  /** While a too-long line streams by: its first and last bytes, and its length. */
  private skipping: { head: Buffer; tail: Buffer; bytes: number } | null = null;
  private stderrTail = "";

  constructor(private readonly options: ChildProcessTransportOptions) {}

  /** The end of what the server wrote to stderr, for its last error. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  start(): Promise<void> {
    const { command, args, env, cwd, sandbox = NO_SANDBOX } = this.options;
    // Its own folder, when the entry names one, is the only one it may write; else it runs, read-only, in loopd's.
    const folder = cwd === undefined ? null : path.resolve(cwd);
    const spawnAs = sandbox.confine({ command, args, cwd: folder ?? process.cwd(), writable: folder });
    return new Promise((resolve, reject) => {
      const child = spawn(spawnAs.command, spawnAs.args, {
        env,
        cwd: spawnAs.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        windowsHide: true,
      });
      this.child = child;
      child.once("spawn", () => resolve());
      child.once("error", (err: NodeJS.ErrnoException) => {
        if (child.pid === undefined) {
          this.exitReason = `could not be started (${err.code ?? err.message})`;
          this.child = null;
          reject(new Error(`${command} ${this.exitReason}`));
        }
        this.onerror?.(err);
      });
      // Whatever the server left running in its group (a worker, the server under an `npx`) goes with it.
      child.once("exit", (code, signal) => {
        this.exitReason ??= this.reasonOf(code, signal);
        killGroup(child.pid!, "SIGKILL");
      });
      child.once("close", (code, signal) => {
        this.exitReason ??= this.reasonOf(code, signal);
        this.exitCode = code;
        this.child = null;
        this.onclose?.();
      });
      child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
      child.stderr.on("data", (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_BYTES);
      });
      child.stdin.on("error", (err) => this.onerror?.(err));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed)
      return Promise.reject(new Error(`the server ${this.exitReason ?? "is not running"}`));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Why it ended: loopd's stop (its stdin closed, then signals), or what the process itself did. */
  private reasonOf(code: number | null, signal: NodeJS.Signals | null): string {
    return this.stopping && (this.signalled || code === 0) ? "was stopped by loopd" : exitReasonOf(code, signal);
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const within = (ms: number) =>
      Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref()),
      ]);
    // Named when it exits (see reasonOf): a server ending by itself meanwhile (a command that could not run, as a failed handshake closes it) says its own reason.
    this.stopping = true;
    child.stdin.end();
    if (await within(EXIT_GRACE_MS)) return;
    this.signalled = true;
    killGroup(child.pid!, "SIGTERM");
    if (await within(EXIT_GRACE_MS)) return;
    killGroup(child.pid!, "SIGKILL");
    await closed;
  }

  /** Splits stdout into lines (one JSON-RPC message each), never holding more than `maxMessageBytes` of one. */
  private read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; start = end + 1, end = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, end));
      this.endLine();
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += part.length;
      this.skipping.tail = Buffer.concat([this.skipping.tail, part]).subarray(-EDGE_BYTES);
      return;
    }
    this.chunks.push(part);
    this.length += part.length;
    if (this.length <= this.options.maxMessageBytes) return;
    const line = Buffer.concat(this.chunks);
    this.skipping = {
      head: line.subarray(0, EDGE_BYTES),
      tail: Buffer.from(line.subarray(-EDGE_BYTES)),
      bytes: line.length,
    };
    this.chunks = [];
    this.length = 0;
  }

  private endLine(): void {
    if (this.skipping) {
      const { head, tail, bytes } = this.skipping;
      this.skipping = null;
      const id = idOfEdges(head.toString("utf8"), tail.toString("utf8"));
      const problem = `the server sent a message of ${bytes.toLocaleString("en-US")} bytes, more than loopd reads (${this.options.maxMessageBytes.toLocaleString("en-US")}); ask for less`;
      if (id === undefined) this.onerror?.(new Error(problem));
      else this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32603, message: problem } });
      return;
    }
    const line = Buffer.concat(this.chunks).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.length = 0;
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.onerror?.(
        new Error(`the server wrote a line that is not a JSON-RPC message: ${JSON.stringify(line.slice(0, 120))}`),
      );
      return;
    }
    this.onmessage?.(message);
  }
}

/** The id of a JSON-RPC response, from its first or last bytes (`{"jsonrpc":"2.0","id":3,…` or `…,"jsonrpc":"2.0","id":3}`). */
function idOfEdges(head: string, tail: string): string | number | undefined {
  const found =
    /"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*\}\s*$/.exec(tail) ??
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")/.exec(head);
  return found ? (JSON.parse(found[1]!) as string | number) : undefined;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/** How a server's process ended, in loopd's words. 126 and 127 are what a sandbox's launcher (and a shell) answer for a command it could not run: said so, since the stderr that says more is not shown to tenants. */
function exitReasonOf(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  return `exited with code ${code}${code === 127 ? " (command not found)" : code === 126 ? " (command not executable)" : ""}`;
}
