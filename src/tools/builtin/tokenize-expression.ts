/** Thrown for any problem with a calculator expression; the message names the position. */
export class ExpressionError extends Error {
  override readonly name = "ExpressionError";
}

export type Token =
  | { kind: "number"; value: number; text: string; pos: number }
  | { kind: "name"; text: string; pos: number }
  | { kind: "op"; text: Operator; pos: number }
  | { kind: "end"; text: ""; pos: number };

export type Operator = "+" | "-" | "*" | "/" | "%" | "^" | "(" | ")" | ",";

const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE = /\s+/y;
const OPERATORS = new Set<string>(["+", "-", "*", "/", "%", "^", "(", ")", ","]);

/** Splits an expression into tokens; positions are 1-based, as a person counts. */
export function tokenizeExpression(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const match = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    return re.exec(source)?.[0];
  };
  while (i < source.length) {
    const pos = i + 1;
    const space = match(WHITESPACE);
    if (space !== undefined) {
      i += space.length;
      continue;
    }
    const number = match(NUMBER);
    if (number !== undefined) {
      if (!Number.isFinite(Number(number)))
        throw new ExpressionError(`the number ${number} at position ${pos} is too large`);
      tokens.push({ kind: "number", value: Number(number), text: number, pos });
      i += number.length;
      continue;
    }
    const name = match(NAME);
    if (name !== undefined) {
      tokens.push({ kind: "name", text: name, pos });
      i += name.length;
      continue;
    }
    if (source.startsWith("**", i)) {
      // Python's and JavaScript's power operator, which models often write.
      tokens.push({ kind: "op", text: "^", pos });
      i += 2;
      continue;
    }
    const char = source[i]!;
    if (!OPERATORS.has(char)) throw new ExpressionError(`unexpected character '${char}' at position ${pos}`);
    tokens.push({ kind: "op", text: char as Operator, pos });
    i += 1;
  }
  tokens.push({ kind: "end", text: "", pos: source.length + 1 });
  return tokens;
}
