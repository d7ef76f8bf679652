import { Webhook } from "standardwebhooks";
import { z } from "zod";
import { checkToolInput } from "../check-tool-input.js";
import { ToolErrorResult, type Tool, type ToolContext } from "../define-tool.js";
import type { HttpToolEntry } from "./http-tool-entry.js";
import { readCapped } from "./read-capped.js";
import { causeCode } from "../cause-code.js";

/** Statuses a read-only tool is tried again on, once (with a refused connection): the receiver or a proxy in front of it was not there. */
const RETRIED_STATUSES = new Set([502, 503, 504]);
/** Room past the result cap for the JSON around the output (`{"output": …}`). */
const ENVELOPE_CHARS = 4_096;
/** How much of an error answer's body the model is shown. */
const ERROR_BODY_CHARS = 300;

/**
 * A tool that is an HTTP endpoint (`TOOLS_FILE`'s `http`): each call POSTs
 * `{tool_call_id, name, input, conversation_id, run_id}` with
 * `Idempotency-Key: <tool_call_id>`, signed the Standard Webhooks way when
 * the entry has a `secret`. Its input is checked against the entry's
 * `input_schema` first (in the schema worker). Every way it can go wrong is
 * an error result saying what happened and what to try.
 */
export function createHttpTool(entry: HttpToolEntry): Tool<Record<string, unknown>> {
  const signer = entry.secret ? new Webhook(entry.secret) : null;
  const target = new URL(entry.url);
  const where = `${target.origin}${target.pathname}`;
  const approval = entry.approval ?? (entry.read_only ? "never" : "always");
  return {
    name: entry.name,
    description: entry.description,
    input: z.record(z.string(), z.unknown()),
    inputSchema: entry.input_schema,
    readOnly: entry.read_only,
    approval,
    needsApproval: () => approval === "always",
    source: "http",
    ...(entry.timeout_ms !== undefined && { timeoutMs: entry.timeout_ms }),
    async execute(input, ctx) {
      await checkToolInput(entry.name, entry.input_schema, input, { signal: ctx.signal });
      const body = JSON.stringify({
        tool_call_id: ctx.toolCallId,
        name: entry.name,
        input,
        conversation_id: ctx.conversationId,
        run_id: ctx.runId,
      });
      for (let attempt = 1; ; attempt++) {
        const retry = entry.read_only && attempt === 1;
        let res: Response;
        try {
          res = await fetch(entry.url, {
            method: "POST",
            headers: headersFor(ctx, body),
            body,
            signal: ctx.signal,
            redirect: "manual",
          });
        } catch (err) {
          if (ctx.signal.aborted) throw ctx.signal.reason;
          const code = causeCode(err);
          if (retry && code === "ECONNREFUSED") continue;
          throw new ToolErrorResult(
            `${entry.name} could not reach ${where} (${code ?? (err as Error).message}); the service may be down: try again later or use another tool.`,
          );
        }
        if (retry && RETRIED_STATUSES.has(res.status)) {
          await res.body?.cancel().catch(() => {});
          continue;
        }
        return answerOf(res, ctx);
      }
    },
  };

  function headersFor(ctx: ToolContext, body: string): Record<string, string> {
    const headers: Record<string, string> = {
      ...entry.headers,
      "content-type": "application/json",
      "idempotency-key": ctx.toolCallId,
    };
    if (!signer) return headers;
    const at = new Date();
    return {
      ...headers,
      "webhook-id": ctx.toolCallId,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signer.sign(ctx.toolCallId, at, body),
    };
  }

  async function answerOf(res: Response, ctx: ToolContext): Promise<unknown> {
    const limit = ctx.maxResultChars + ENVELOPE_CHARS;
    let read: { text: string; complete: boolean };
    try {
      read = await readCapped(res, res.ok ? limit : ERROR_BODY_CHARS);
    } catch (err) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      throw new ToolErrorResult(
        `${entry.name}: the connection to ${where} closed before its answer ended (${causeCode(err) ?? (err as Error).message}); try again.`,
      );
    }
    if (!res.ok) {
      const hint =
        res.status >= 500
          ? "the service failed: try again later or use another tool"
          : "check the arguments, or use another tool";
      const start = read.text.trim() === "" ? "" : `: ${read.text.trim()}${read.complete ? "" : " …"}`;
      throw new ToolErrorResult(`${entry.name} answered HTTP ${res.status}${start}; ${hint}.`);
    }
    if (!read.complete) {
      throw new ToolErrorResult(
        `${entry.name}'s answer is longer than ${limit} characters, more than the model may read; ask for less (a narrower request), or raise the tool's result cap.`,
      );
    }
    const answer = jsonAnswer(read.text, res.headers.get("content-type"));
    if (!answer) return read.text;
    if (answer.is_error === true)
      throw new ToolErrorResult(typeof answer.output === "string" ? answer.output : JSON.stringify(answer.output));
    return answer.output;
  }
}

/** `{"output": …, "is_error"?: bool}` as JSON: the result; anything else is the result as text. */
function jsonAnswer(text: string, contentType: string | null): { output: unknown; is_error?: unknown } | null {
  if (!contentType?.toLowerCase().includes("json")) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) && "output" in value
      ? (value as { output: unknown; is_error?: unknown })
      : null;
  } catch {
    return null;
  }
}
