import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { attachmentIdsOf, type NewMessage, type Summarizes } from "../core/messages.js";
import { OperatorError } from "../errors.js";
import {
  pagedHistory,
  withRequests,
  type PagedMessage,
  type TraceEntry,
  type TraceSpan,
} from "../runs/trace/read-trace.js";
import type { ReplayedRun } from "./replay-run.js";

/** A run as `GET /runs/:run_id` answers it (what replay reads of it). */
export interface RunOverHttp extends ReplayedRun {
  conversation_id: string;
  steps: number;
}

/** How long a server may take to start answering; a body then streams for as long as it takes. */
const ANSWER_TIMEOUT_MS = 30_000;
const RUN_ID = /^run_[0-9a-z]{1,64}$/;

/**
 * A run and its trace read from a loopd server's API instead of its
 * database: how replay reads an embedded database that the server holds
 * (only one process may open it). The requests are rebuilt here, from the
 * trace's records and the conversation's history, exactly as the server
 * rebuilds them for `?expand=requests`. What the server answers is checked
 * before it is used (the URL came from a lock file anyone may write): the
 * run asked for, no more model calls than its steps.
 */
export async function runOverHttp({
  url,
  runId,
  headers = {},
}: {
  url: string;
  runId: string;
  headers?: Record<string, string>;
}): Promise<{ run: RunOverHttp; entries: AsyncIterable<TraceEntry> }> {
  const base = serverUrl(url);
  const get = async (route: string, accept = "application/json") => {
    const started = new AbortController();
    const timer = setTimeout(
      () => started.abort(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)),
      ANSWER_TIMEOUT_MS,
    );
    let res: Response;
    try {
      // The route is joined to the server's own path: a loopd behind a proxy at a sub-path is reached there.
      res = await fetch(new URL(route.replace(/^\//, ""), base), {
        headers: { accept, ...headers },
        signal: started.signal,
      });
    } catch (err) {
      throw new OperatorError(
        `cannot reach the loopd server at ${url}: ${(err as Error).message}; is it still running?`,
        { cause: err },
      );
    } finally {
      // Once it answers, a long trace streams for as long as the replay takes.
      clearTimeout(timer);
    }
    if (res.status === 404) throw new OperatorError(`run ${runId} does not exist on the loopd server at ${url}`);
    if (!res.ok)
      throw new OperatorError(
        `the loopd server at ${url} answered ${res.status} to GET ${route}: ${(await res.text()).slice(0, 300)}`,
      );
    return res;
  };
  if (!RUN_ID.test(runId)) throw new OperatorError(`${JSON.stringify(runId)} is not a run id (run_…)`);
  const run = (await (await get(`/runs/${runId}`)).json()) as RunOverHttp;
  if (run.id !== runId || typeof run.conversation_id !== "string" || !Number.isInteger(run.steps)) {
    throw new OperatorError(
      `the loopd server at ${url} answered for another run than ${runId}: it is not to be trusted`,
    );
  }
  const conversation = encodeURIComponent(run.conversation_id);

  async function* spans(): AsyncGenerator<TraceSpan> {
    const res = await get(`/conversations/${conversation}/runs/${runId}/trace`, "application/x-ndjson");
    // One span a line, the run first, read a line at a time as the replay needs them.
    const lines = createInterface({
      input: Readable.fromWeb(res.body! as Parameters<typeof Readable.fromWeb>[0]),
      crlfDelay: Infinity,
    });
    let calls = 0;
    for await (const line of lines) {
      if (!line) continue;
      const span = JSON.parse(line) as TraceSpan;
      if (span.type === "run") continue;
      // Answered calls only: failed attempts (retries, fallbacks) are as many as the provider's trouble was; the replay sends again only a step's last unanswered one.
      if (span.type === "model.call" && span.outcome !== "failed" && ++calls > run.steps + 1) {
        throw new OperatorError(
          `the loopd server at ${url} sent more model calls for ${runId} than its ${run.steps} steps: it is not to be trusted`,
        );
      }
      yield span;
    }
  }

  const history = pagedHistory(runId, async (afterSeq, limit) => {
    const page = (await (
      await get(`/conversations/${conversation}/messages?after_seq=${afterSeq}&limit=${limit}`)
    ).json()) as {
      data: (NewMessage & { kind?: "notice" | "summary"; summarizes?: Summarizes; run_id: string | null })[];
    };
    return page.data.map(({ role, content, kind, summarizes, excluded, run_id }): PagedMessage => ({
      role,
      content,
      kind: kind ?? null,
      summarizes: summarizes ?? null,
      excluded: excluded ?? null,
      runId: run_id,
    }));
  });
  // Each attachment's bytes, as the server serves them, once (see `withRequests`).
  const attachments = async (messages: readonly NewMessage[]) => {
    const ids = [...attachmentIdsOf(messages)];
    const bytes = await Promise.all(
      ids.map(async (id) =>
        (await get(`/conversations/${conversation}/attachments/${encodeURIComponent(id)}`, "*/*")).arrayBuffer(),
      ),
    );
    return new Map(ids.map((id, i) => [id, Buffer.from(bytes[i]!).toString("base64")]));
  };
  return { run, entries: withRequests(spans(), history, attachments) };
}

/** The server's URL as a base for its routes (`…/` at the end), or what is wrong with it. */
function serverUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OperatorError(
      `--url ${JSON.stringify(url)} is not a URL: give the loopd server's, e.g. http://127.0.0.1:3000`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new OperatorError(`--url ${JSON.stringify(url)} is not an http(s) URL`);
  if (!parsed.pathname.endsWith("/")) parsed.pathname += "/";
  return parsed;
}
