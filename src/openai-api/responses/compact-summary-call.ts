import { startModelCallDeadline } from "../../agent/model-call-deadline.js";
import { SUMMARY_SYSTEM, summaryRequestText } from "../../agent/summary-prompt.js";
import type { ModelProvider } from "../../core/model-provider.js";
import type { Usage } from "../../core/usage.js";
import type { Config } from "../../config.js";
import type { CompactSource } from "./compact-transcript.js";

/** The most a compaction's summary may be, in output tokens (the server's `MAX_TOKENS` when lower). */
export const COMPACT_SUMMARY_TOKENS = 2_048;
/** The most characters of transcript one summary call is shown (long parts are clipped first, head and tail kept). */
export const COMPACT_TRANSCRIPT_CHARS = 240_000;

/** A summary call's end: the text it wrote, or why it failed; its usage either way (null: none reported). */
export type SummaryCall =
  | { type: "written"; text: string; usage: Usage; stopReason: string }
  | { type: "failed"; message: string; usage: Usage | null };

/**
 * One model call that condenses `source` with loopd's summary prompt (as
 * context `summarize` does), within the server's model-call timeout and
 * stream idle limit; `signal` stops it (the client went away, shutdown).
 */
export async function callForSummary({
  provider,
  model,
  source,
  instructions,
  cacheKey,
  config,
  signal,
}: {
  provider: ModelProvider;
  model: string;
  source: CompactSource;
  instructions: string | null;
  cacheKey: string | null;
  config: Pick<Config, "models">;
  signal: AbortSignal;
}): Promise<SummaryCall> {
  const maxTokens = Math.min(config.models.maxTokens, COMPACT_SUMMARY_TOKENS);
  const asked = summaryRequestText(
    { from_seq: 1, to_seq: source.messages.length, previous: source.previous, messages: source.messages },
    { maxWords: Math.floor(maxTokens * 0.6), maxChars: COMPACT_TRANSCRIPT_CHARS },
  );
  const context = instructions
    ? `The assistant's instructions, for context (keep what the conversation needs of them):\n<instructions>\n${instructions.slice(0, COMPACT_TRANSCRIPT_CHARS / 10)}\n</instructions>\n\n`
    : "";
  const deadline = startModelCallDeadline({
    signal,
    callTimeoutMs: config.models.callTimeoutMs,
    idleMs: config.models.streamIdleMs,
  });
  let reported: Usage | null = null;
  try {
    const response = await provider.generate({
      model,
      system: SUMMARY_SYSTEM,
      messages: [{ role: "user", content: [{ type: "text", text: context + asked }] }],
      tools: [],
      toolChoice: "none",
      maxTokens,
      cacheKey,
      signal: deadline.signal,
      onProgress: deadline.onProgress,
      onUsage: (u) => (reported = u),
    });
    const text = response.content
      .flatMap((b) => (b.type === "text" ? [b.text] : []))
      .join("\n")
      .trim();
    if (text === "") return { type: "failed", message: "the model answered with no text", usage: response.usage };
    return { type: "written", text, usage: response.usage, stopReason: response.stopReason };
  } catch (thrown) {
    const err = deadline.expired() ?? thrown;
    return { type: "failed", message: err instanceof Error ? err.message : String(err), usage: reported };
  } finally {
    deadline.dispose();
  }
}
