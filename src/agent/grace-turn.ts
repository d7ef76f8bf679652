import type { NewMessage } from "../core/messages.js";
import type { BudgetName } from "../core/run-outcome.js";
import { estimateMessageTokens } from "./estimate-tokens.js";

const WHAT: Record<BudgetName, string> = { steps: "step", tokens: "token", seconds: "time", cost: "cost" };

/** The notice of a grace turn: which budget, and what the model should do now. */
export const graceNotice = (name: BudgetName) =>
  `Stopping: ${WHAT[name]} budget reached. Answer with what you have: do not call tools; summarize what was done and what is left.`;

/** A grace turn in a history: its notice is the last user-role message; `answered` once the grace call's answer follows it. */
export interface GraceTurn {
  over: BudgetName;
  answered: boolean;
}

/**
 * The grace turn the history ends in, if any: after a crash, what tells the
 * run taken up again that its next call is the grace call (or that it was
 * made, and the run is over), whatever moment the process stopped at.
 */
export function graceTurnOf(history: readonly NewMessage[]): GraceTurn | null {
  let answered = false;
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === "assistant") answered = true;
    if (m.role !== "user") continue;
    if (m.kind !== "notice") return null;
    const over = NOTICES.get(m.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
    return over ? { over, answered } : null;
  }
  return null;
}

const NOTICES = new Map((["steps", "tokens", "seconds", "cost"] as const).map((name) => [graceNotice(name), name]));

/** What the grace notice adds to the grace call's input (estimated). */
export const NOTICE_TOKENS = Math.max(
  ...(["steps", "tokens", "seconds", "cost"] as const).map((name) =>
    estimateMessageTokens({ role: "user", kind: "notice", content: [{ type: "text", text: graceNotice(name) }] }),
  ),
);
