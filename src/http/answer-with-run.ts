import type { FastifyReply } from "fastify";
import { textOf } from "../core/messages.js";
import { presentRun } from "../conversations/present.js";
import { AppError } from "../errors.js";
import { linkedAbort } from "../util/linked-abort.js";
import { waitForRunEnd } from "../runs/wait-for-run-end.js";
import type { RunRow } from "../store/schema.js";
import type { HttpDeps } from "./http-deps.js";
import { streamRunEvents } from "./sse.js";

/**
 * The answer to a request that set a run going (a message sent, a pause
 * answered): the SSE stream of its events after `afterEvent`, or, once the
 * run ends or pauses, `{run, messages, output_text}` with the messages from
 * `fromMessageSeq` on.
 */
export async function answerWithRun(
  deps: HttpDeps,
  reply: FastifyReply,
  {
    run,
    replayed,
    afterEvent,
    fromMessageSeq,
    release,
  }: {
    run: RunRow;
    replayed: boolean;
    afterEvent: number;
    fromMessageSeq: number | null;
    release: (() => void) | undefined;
  },
) {
  const { services, runs, conversations } = deps;
  reply.header("x-loopd-run-id", run.id);
  if (replayed) reply.header("idempotent-replayed", "true");
  if (release)
    return streamRunEvents(services, reply, {
      run,
      after: afterEvent,
      shutdown: deps.shutdown,
      pingMs: deps.ssePingMs,
      release,
    });
  const gone = new AbortController();
  reply.raw.once("close", () => gone.abort());
  // A stopping server answers with the run as it stands instead of holding
  // the shutdown until the force-exit; the next process carries the run on.
  const stop = linkedAbort(gone.signal, deps.shutdown);
  const ended = await waitForRunEnd({ services, runs, runId: run.id, signal: stop.signal }).finally(stop.dispose);
  if (!ended) throw new AppError("not_found", `run ${run.id} does not exist`);
  // A queued run has its first message only once it started.
  const messages = await conversations.messagesOfRun(ended, fromMessageSeq ?? ended.firstSeq);
  const lastAssistant = messages.filter((m) => m.role === "assistant").at(-1);
  return { run: presentRun(ended), messages, output_text: lastAssistant ? textOf(lastAssistant) : "" };
}

/** Takes a stream's place first when the client asked for a stream, so a server at its bound starts nothing. */
export function takeStreamIf(
  deps: HttpDeps,
  { stream, accept, tenant }: { stream: boolean | undefined; accept: string | undefined; tenant: string },
): (() => void) | undefined {
  return (stream ?? (accept ?? "").includes("text/event-stream")) ? deps.streams.take(tenant) : undefined;
}
