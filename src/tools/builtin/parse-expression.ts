import { ExpressionError, tokenizeExpression, type Token } from "./tokenize-expression.js";

export type ExpressionNode =
  | { kind: "number"; value: number }
  | { kind: "constant"; name: string; pos: number }
  | { kind: "unary"; op: "-" | "+"; operand: ExpressionNode; pos: number }
  | { kind: "binary"; op: BinaryOperator; left: ExpressionNode; right: ExpressionNode; pos: number }
  | { kind: "call"; name: string; args: ExpressionNode[]; pos: number };

export type BinaryOperator = "+" | "-" | "*" | "/" | "%" | "^";

/** Binding powers [left, right]: left < right is left-associative, left > right right-associative. */
const INFIX: Record<BinaryOperator, [number, number]> = {
  "+": [10, 11],
  "-": [10, 11],
  "*": [20, 21],
  "/": [20, 21],
  "%": [20, 21],
  "^": [41, 40],
};
/** Unary minus binds looser than ^, so -2^2 is -(2^2) = -4 as in mathematics. */
const PREFIX_POWER = 30;
const MAX_DEPTH = 100;

/**
 * A Pratt parser for arithmetic. It only builds a tree from the grammar's own
 * tokens: nothing in the input is ever run as code. `functions` and
 * `constants` say which names exist (lower case; names match in any case), so
 * an unknown name fails here, with its position, before anything is evaluated.
 */
export function parseExpression(
  source: string,
  { functions, constants }: { functions: readonly string[]; constants: readonly string[] },
): ExpressionNode {
  const tokens = tokenizeExpression(source);
  let index = 0;
  const peek = (): Token => tokens[index]!;
  const next = (): Token => tokens[index++]!;
  const unexpected = (token: Token): ExpressionError =>
    token.kind === "end"
      ? new ExpressionError("unexpected end of expression")
      : new ExpressionError(`unexpected '${token.text}' at position ${token.pos}`);
  const expect = (text: ")" | "("): void => {
    const token = next();
    if (token.kind !== "op" || token.text !== text) {
      throw token.kind === "end"
        ? new ExpressionError(`missing '${text}' at the end of the expression`)
        : new ExpressionError(`expected '${text}' but found '${token.text}' at position ${token.pos}`);
    }
  };

  const parse = (minPower: number, depth: number): ExpressionNode => {
    if (depth > MAX_DEPTH) throw new ExpressionError("the expression is nested too deeply");
    let left = parsePrefix(depth);
    for (;;) {
      const token = peek();
      if (token.kind !== "op" || !(token.text in INFIX)) break;
      const op = token.text as BinaryOperator;
      const [leftPower, rightPower] = INFIX[op];
      if (leftPower <= minPower) break;
      next();
      left = { kind: "binary", op, left, right: parse(rightPower, depth + 1), pos: token.pos };
    }
    return left;
  };

  const parsePrefix = (depth: number): ExpressionNode => {
    const token = next();
    if (token.kind === "number") return { kind: "number", value: token.value };
    if (token.kind === "op" && (token.text === "-" || token.text === "+")) {
      return { kind: "unary", op: token.text, operand: parse(PREFIX_POWER, depth + 1), pos: token.pos };
    }
    if (token.kind === "op" && token.text === "(") {
      const inner = parse(0, depth + 1);
      expect(")");
      return inner;
    }
    if (token.kind === "name") return parseName(token, depth);
    throw unexpected(token);
  };

  const parseName = (token: Token, depth: number): ExpressionNode => {
    const name = token.text.toLowerCase();
    const calls = peek().kind === "op" && peek().text === "(";
    if (functions.includes(name)) {
      if (!calls) throw new ExpressionError(`${name} is a function: write ${name}(…) (at position ${token.pos})`);
      next();
      const args: ExpressionNode[] = [];
      if (!(peek().kind === "op" && peek().text === ")")) {
        args.push(parse(0, depth + 1));
        while (peek().kind === "op" && peek().text === ",") {
          next();
          args.push(parse(0, depth + 1));
        }
      }
      expect(")");
      return { kind: "call", name, args, pos: token.pos };
    }
    if (constants.includes(name)) {
      if (calls) throw new ExpressionError(`${name} is a constant, not a function (at position ${token.pos})`);
      return { kind: "constant", name, pos: token.pos };
    }
    throw new ExpressionError(
      `unknown name '${token.text}' at position ${token.pos}; ` +
        `functions: ${functions.join(", ")}; constants: ${constants.join(", ")}`,
    );
  };

  if (peek().kind === "end") throw new ExpressionError("the expression is empty");
  const tree = parse(0, 0);
  if (peek().kind !== "end") throw unexpected(peek());
  return tree;
}
