import { textOf, type NewMessage } from "../../core/messages.js";
import { isSummary } from "../../agent/summary-in-context.js";
import type { CompactInputItem } from "./compact-body.js";

/** What a compaction condenses: the newest summary so far (null: none), then the messages after it. */
export interface CompactSource {
  previous: string | null;
  messages: NewMessage[];
}

type Part = Exclude<Extract<CompactInputItem, { content: unknown }>["content"], string>[number];

const partText = (p: Part): string => {
  if (p.type === "input_image") return "[an image]";
  if (p.type === "input_file") return `[a file${p.filename ? ` "${p.filename}"` : ""}]`;
  return p.text ?? p.refusal ?? "";
};
const textOfContent = (content: string | Part[]) =>
  typeof content === "string" ? content : content.map(partText).join("\n");
const user = (text: string): NewMessage => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string): NewMessage => ({ role: "assistant", content: [{ type: "text", text }] });

/**
 * A stored history as what a compaction condenses: a summary in it (loopd's
 * own, or a compaction a response started from) is the `previous` summary,
 * and only what it does not cover follows; refused and deleted turns are left out.
 */
export function sourceOfHistory(history: readonly NewMessage[]): CompactSource {
  const at = history.findLastIndex((m) => m.role === "user" && m.kind === "summary");
  const summary = at < 0 ? undefined : history[at]!;
  // A context summary covers seqs up to `to_seq`; a compaction's summary, everything before it.
  const from = summary === undefined ? 0 : isSummary(summary) ? summaryEnd(summary) : at + 1;
  return {
    previous: summary === undefined ? null : textOf(summary),
    messages: history.slice(from).filter((m) => !m.excluded && !(m.role === "user" && m.kind !== undefined)),
  };
}

const summaryEnd = (m: NewMessage) => (m.role === "user" && m.summarizes ? m.summarizes.to_seq : 0);

/**
 * A request's `input` added to what the history gave: messages of every
 * role, calls and their outputs, as transcript lines; a compaction item
 * stands for everything before it (`opened[i]` is item i's summary), so
 * the newest one starts the source over.
 */
export function addInput(
  source: CompactSource,
  input: string | readonly CompactInputItem[],
  opened: ReadonlyMap<number, string>,
): CompactSource {
  if (typeof input === "string") return { ...source, messages: [...source.messages, user(input)] };
  let previous = source.previous;
  let messages = [...source.messages];
  input.forEach((item, i) => {
    switch (item.type) {
      case "compaction":
        previous = opened.get(i)!;
        messages = [];
        return;
      case "function_call":
        messages.push(assistant(`(called ${item.name} with ${item.arguments})`));
        return;
      case "function_call_output":
        messages.push(user(`(the result of call ${item.call_id}: ${textOfContent(item.output)})`));
        return;
      case "mcp_call":
        messages.push(assistant(`(called ${item.name} with ${item.arguments}: ${item.error ?? item.output ?? ""})`));
        return;
      default: {
        const text = textOfContent(item.content);
        if (item.role === "assistant") messages.push(assistant(text));
        else if (item.role === "user") messages.push(user(text));
        else messages.push(user(`(instructions: ${text})`));
      }
    }
  });
  return { previous, messages };
}
