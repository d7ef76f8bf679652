import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { NewMessage } from "../core/messages.js";
import { OperatorError } from "../errors.js";
import { withRequests, type HistoryReader, type TraceEntry, type TraceSpan } from "../runs/trace/read-trace.js";
import type { ReplayedRun } from "./replay-run.js";

/** A run as `GET /runs/:run_id` answers it (what replay reads of it). */
export interface RunOverHttp extends ReplayedRun {
  conversation_id: string;
  steps: number;
}

/**
 * A run and its trace read from a loopd server's API instead of its
 * database: how replay reads an embedded database that the server holds
 * (only one process may open it). The requests are rebuilt here, from the
 * trace's records and the conversation's history, exactly as the server
 * rebuilds them for `?expand=requests`.
 */
export async function runOverHttp({ url, runId, headers = {} }: { url: string; runId: string; headers?: Record<string, string> }): Promise<{ run: RunOverHttp; entries: AsyncIterable<TraceEntry> }> {
  const get = async (path: string, accept = "application/json") => {
    let res: Response;
    try {
      res = await fetch(new URL(path, url), { headers: { accept, ...headers }, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      throw new OperatorError(`cannot reach the loopd server at ${url}: ${(err as Error).message}; is it still running?`, { cause: err });
    }
    if (res.status === 404) throw new OperatorError(`run ${runId} does not exist on the loopd server at ${url}`);
    if (!res.ok) throw new OperatorError(`the loopd server at ${url} answered ${res.status} to GET ${path}: ${(await res.text()).slice(0, 300)}`);
    return res;
  };
  const run = (await (await get(`/runs/${encodeURIComponent(runId)}`)).json()) as RunOverHttp;
  const conversation = encodeURIComponent(run.conversation_id);

  async function* spans(): AsyncGenerator<TraceSpan> {
    const res = await get(`/conversations/${conversation}/runs/${encodeURIComponent(run.id)}/trace`, "application/x-ndjson");
    // One span a line, the run first: read as it streams, however long the run.
    const lines = createInterface({ input: Readable.fromWeb(res.body! as Parameters<typeof Readable.fromWeb>[0]), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line) continue;
      const span = JSON.parse(line) as TraceSpan;
      if (span.type !== "run") yield span;
    }
  }

  const history: NewMessage[] = [];
  const readHistory: HistoryReader = async (upTo) => {
    while (history.length < upTo) {
      const page = (await (await get(`/conversations/${conversation}/messages?after_seq=${history.length}&limit=1000`)).json()) as { data: (NewMessage & { run_id: string | null })[] };
      if (page.data.length === 0) break;
      // As the store reads them for the trace: this run's own refused turn was marked only as it ended, after its calls.
      history.push(...page.data.map(({ role, content, kind, excluded, run_id }: NewMessage & { kind?: string; run_id: string | null }) => ({ role, content, ...(kind && { kind }), ...(excluded && run_id !== run.id && { excluded }) }) as NewMessage));
    }
    return history;
  };
  return { run, entries: withRequests(spans(), readHistory) };
}
