import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { evaluateExpression } from "./evaluate-expression.js";

export function createCalculateTool() {
  return defineTool({
    name: "calculate",
    description:
      "Evaluate an arithmetic expression exactly instead of computing it in your head. " +
      "Supports numbers (1.5, 2e6), + - * / % ^ (power, right-associative), parentheses, " +
      "sqrt, abs, round(x[, digits]), floor, ceil, min, max, pow, log (base 10, or log(x, base)), ln, exp, " +
      "sin, cos, tan (radians) and the constants pi and e. Returns {expression, result}.",
    input: z.object({
      expression: z.string().min(1).max(1000).describe('The expression, e.g. "(3 + 4) * 2 ^ 10 / sqrt(2)"'),
    }),
    readOnly: true,
    execute: ({ expression }) => ({ expression, result: evaluateExpression(expression) }),
  });
}
