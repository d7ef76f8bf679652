import { parseExpression, type BinaryOperator, type ExpressionNode } from "./parse-expression.js";
import { ExpressionError } from "./tokenize-expression.js";

export { ExpressionError } from "./tokenize-expression.js";

interface MathFunction {
  minArgs: number;
  maxArgs: number;
  apply: (args: number[]) => number;
}

const unary = (fn: (x: number) => number): MathFunction => ({ minArgs: 1, maxArgs: 1, apply: ([x]) => fn(x!) });

const FUNCTIONS: Record<string, MathFunction> = {
  sqrt: unary(Math.sqrt),
  abs: unary(Math.abs),
  round: { minArgs: 1, maxArgs: 2, apply: ([x, digits = 0]) => roundHalfAwayFromZero(x!, digits) },
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  min: { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.min(...args) },
  max: { minArgs: 1, maxArgs: Infinity, apply: (args) => Math.max(...args) },
  pow: { minArgs: 2, maxArgs: 2, apply: ([x, y]) => x! ** y! },
  /** log(x) is base 10; log(x, b) is base b. */
  log: {
    minArgs: 1,
    maxArgs: 2,
    apply: ([x, base]) => (base === undefined ? Math.log10(x!) : Math.log(x!) / Math.log(base)),
  },
  ln: unary(Math.log),
  exp: unary(Math.exp),
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
};

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

const NAMES = { functions: Object.keys(FUNCTIONS), constants: Object.keys(CONSTANTS) };

/**
 * Evaluates an arithmetic expression: numbers (1.5, 1e3), + - * / % ^ (and
 * **), unary minus, parentheses, the functions in {@link FUNCTIONS} (angles in
 * radians) and the constants pi and e. Throws {@link ExpressionError} with the
 * position of the problem. The result is rounded to 15 significant digits so
 * float noise (0.1 + 0.2) does not reach the model.
 */
export function evaluateExpression(source: string): number {
  const value = evaluate(parseExpression(source, NAMES));
  return Number(value.toPrecision(15)) + 0; // + 0 turns -0 into 0
}

function evaluate(node: ExpressionNode): number {
  switch (node.kind) {
    case "number":
      return node.value;
    case "constant":
      return CONSTANTS[node.name]!;
    case "unary": {
      const operand = evaluate(node.operand);
      return node.op === "-" ? -operand : operand;
    }
    case "binary":
      return checked(
        applyBinary(node.op, evaluate(node.left), evaluate(node.right), node.pos),
        `the result of '${node.op}'`,
        node.pos,
      );
    case "call": {
      const fn = FUNCTIONS[node.name]!;
      const count = node.args.length;
      if (count < fn.minArgs || count > fn.maxArgs) {
        throw new ExpressionError(`${node.name} takes ${arityText(fn)}, got ${count} (at position ${node.pos})`);
      }
      const args = node.args.map(evaluate);
      return checked(fn.apply(args), `${node.name}(${args.join(", ")})`, node.pos);
    }
  }
}

function applyBinary(op: BinaryOperator, left: number, right: number, pos: number): number {
  switch (op) {
    case "+":
      return left + right;
    case "-":
      return left - right;
    case "*":
      return left * right;
    case "/":
    case "%":
      if (right === 0) throw new ExpressionError(`division by zero at position ${pos}`);
      return op === "/" ? left / right : left % right;
    case "^":
      return left ** right;
  }
}

function checked(value: number, what: string, pos: number): number {
  if (Number.isNaN(value)) throw new ExpressionError(`${what} at position ${pos} is not a real number`);
  if (!Number.isFinite(value)) throw new ExpressionError(`${what} at position ${pos} is too large`);
  return value;
}

function roundHalfAwayFromZero(x: number, digits: number): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15) {
    throw new ExpressionError(`round's digits must be a whole number from 0 to 15, got ${digits}`);
  }
  const factor = 10 ** digits;
  return (Math.sign(x) * Math.round(Math.abs(x) * factor)) / factor;
}

function arityText({ minArgs, maxArgs }: MathFunction): string {
  const plural = (n: number) => `${n} argument${n === 1 ? "" : "s"}`;
  if (minArgs === maxArgs) return plural(minArgs);
  if (maxArgs === Infinity) return `at least ${plural(minArgs)}`;
  return `${minArgs} or ${plural(maxArgs)}`;
}
