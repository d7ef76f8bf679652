/**
 * What a summary call (context `summarize`) is told to do: its system
 * prompt. The mock provider knows a summary call by it.
 */
export const SUMMARY_SYSTEM = [
  "You condense the earlier part of a conversation between a user and an AI assistant that uses tools, so that the assistant can go on without it.",
  "Keep what the assistant will still need: the facts learnt (figures, names, ids, file paths, URLs, dates), the decisions made and why, what the user asked for and prefers, the questions still open and the work not finished, and the tool results that may still be needed (quote their key values exactly).",
  "Leave out greetings, repetition and whatever was later superseded. Write plain text in the third person, as notes; do not address the user and do not continue the conversation.",
].join(" ");
