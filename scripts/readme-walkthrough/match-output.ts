/**
 * Whether what a command printed is what the README shows for it. The
 * README's output is real output with two kinds of license, both visible to
 * its reader: `…` (and a `/* … *\/` comment in a jsonc block) stands for
 * anything it left out (on a line of its own: any lines, or none), and what
 * differs from one run to the next (ids, times, dates, weekdays, durations,
 * token counts) stands for any value of its kind.
 * JSON blocks compare without the white space between tokens, so `jq .`'s
 * layout and a condensed one are the same.
 */
export function matchOutput({ expected, actual, lang }: { expected: string; actual: string; lang: string }): boolean {
  const json = lang === "json" || lang === "jsonc";
  const shown = json ? compactJson(expected, { comments: lang === "jsonc" }) : tidy(expected);
  const printed = volatile(json ? compactJson(actual, { comments: false }) : tidy(actual));
  // A gap on a line of its own stands for any lines, none included: its line break goes with it.
  const pattern = shown
    .split(`\n${GAP}`)
    .map((part) =>
      part
        .split(GAP)
        .map((literal) => escapeRegExp(volatile(literal)))
        .join("[\\s\\S]*?"),
    )
    .join("(?:\\n[\\s\\S]*?)?");
  return new RegExp(`^${pattern}$`).test(printed);
}

const GAP = "…";

/** Lines without trailing blanks or colour codes, and without blank lines at the end. */
function tidy(text: string): string {
  return text
    .replace(/\x1b\[[0-9;]*m/g, "") // eslint-disable-line no-control-regex
    .split("\n")
    .map((line) => line.replace(/\s+$/, ""))
    .join("\n")
    .replace(/\n+$/, "");
}

/** White space outside strings removed (`…` kept; a comment, outside strings, becomes `…`). */
export function compactJson(text: string, { comments }: { comments: boolean }): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (comments && c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 1;
      out += GAP;
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

const WEEKDAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday";

/** What changes from run to run, as one token of its kind. */
function volatile(text: string): string {
  return (
    text
      .replace(/\b(conv|run|msg|att|key)_[0-9a-z]{16,}\b/g, "$1_<id>")
      .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?/g, "<datetime>")
      .replace(/\b\d\d:\d\d(?::\d\d)?\b/g, "<clock>")
      .replace(new RegExp(`\\b(?:${WEEKDAYS})\\b`, "g"), "<weekday>")
      .replace(/("(?:duration_ms|latency_ms|ttft_ms)":)\d+(?:\.\d+)?/g, "$1<ms>")
      // The mock's token counts follow its answers' length, which holds the date: "Tuesday" is shorter than "Wednesday".
      .replace(/("(?:input_tokens|output_tokens|estimated_input_tokens)":)\d+/g, "$1<tokens>")
      .replace(/("cost_usd":)\d+(?:\.\d+)?(?:e-?\d+)?/g, "$1<usd>")
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
