/**
 * The mock provider's reading of "what is 12*7" / "calculate (3+4)^2": the
 * longest run of digits, operators and parentheses that has an operator
 * between two operands. A few spelled-out operators are understood.
 */
export function findArithmetic(text: string): string | null {
  const spelled = text
    .replace(/×/g, "*")
    .replace(/÷/g, "/")
    .replace(/\s+(?:times|multiplied by)\s+/gi, " * ")
    .replace(/\s+divided by\s+/gi, " / ")
    .replace(/\s+plus\s+/gi, " + ")
    .replace(/\s+minus\s+/gi, " - ")
    .replace(/\s+to the power of\s+/gi, " ^ ");
  const candidates = (spelled.match(/[\d.()+\-*/^%\s]+/g) ?? [])
    .map((c) => c.trim().replace(/[.\s]+$/, ""))
    .filter((c) => /\d/.test(c) && /[\d)]\s*(?:\*\*|[-+*/^%])\s*[\d(.-]/.test(c));
  if (candidates.length === 0) return null;
  return candidates.reduce((a, b) => (b.length > a.length ? b : a));
}
