/**
 * The mock provider's reading of "what is 12*7" / "calculate (3+4)^2": the
 * longest run of digits, operators and parentheses that has an operator
 * between two operands. A few spelled-out operators are understood.
 *
 * Any client can send any text to the mock, so every step is linear in the
 * text: a pattern such as /\s+times\s+/ or /[.\s]+$/ backtracks through a
 * long run of spaces from each of its positions, which is quadratic (a 40 KB
 * message once froze the process for 9 s).
 */
export function findArithmetic(text: string): string | null {
  // With whitespace runs collapsed first, the patterns below meet at most one
  // space at a time and cannot backtrack through a run.
  const spelled = text
    .replace(/\s+/g, " ")
    .replace(/×/g, "*")
    .replace(/÷/g, "/")
    .replace(/ (?:times|multiplied by) /gi, " * ")
    .replace(/ divided by /gi, " / ")
    .replace(/ plus /gi, " + ")
    .replace(/ minus /gi, " - ")
    .replace(/ to the power of /gi, " ^ ");
  const candidates = (spelled.match(/[\d.()+\-*/^%\s]+/g) ?? [])
    .map((c) => trimTrailingDotsAndSpaces(c.trimStart()))
    .filter((c) => /\d/.test(c) && /[\d)]\s*(?:\*\*|[-+*/^%])\s*[\d(.-]/.test(c));
  if (candidates.length === 0) return null;
  return candidates.reduce((a, b) => (b.length > a.length ? b : a));
}

/** A sentence's full stop is not a decimal point. A loop rather than /[.\s]+$/, which is quadratic. */
function trimTrailingDotsAndSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && /[.\s]/.test(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}
