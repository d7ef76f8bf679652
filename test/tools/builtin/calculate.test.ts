import { describe, expect, it } from "vitest";
import { createCalculateTool } from "../../../src/tools/builtin/calculate.js";
import { evaluateExpression } from "../../../src/tools/builtin/evaluate-expression.js";
import { runTool } from "../run-tool.js";

describe("calculate", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3], // left-associative
    ["100 / 10 / 5", 2],
    ["2 ^ 3 ^ 2", 512], // right-associative
    ["2 ** 10", 1024],
    ["-2 ^ 2", -4], // unary minus binds looser than ^
    ["2 ^ -1", 0.5],
    ["-(-3)", 3],
    ["--3", 3],
    ["+5", 5],
    ["2 * -3", -6],
    ["17 % 5", 2],
    ["1e3 / 4", 250],
    ["2.5E-1", 0.25],
    [".5 * 4", 2],
    ["0.1 + 0.2", 0.3], // rounded to 15 significant digits
    ["3.", 3],
  ])("evaluates %s = %s", (expression, expected) => {
    expect(evaluateExpression(expression)).toBe(expected);
  });

  it.each([
    ["sqrt(16) + abs(-3)", 7],
    ["round(2.5)", 3],
    ["round(-2.5)", -3],
    ["round(3.14159, 2)", 3.14],
    ["floor(-1.5) + ceil(1.2)", 0],
    ["min(3, 1, 2) + max(4, 9)", 10],
    ["pow(2, 8)", 256],
    ["log(1000)", 3],
    ["log(8, 2)", 3],
    ["ln(e)", 1],
    ["exp(0)", 1],
    ["cos(0) + sin(0) + tan(0)", 1],
    ["round(sin(pi / 2), 10)", 1],
    ["2 * pi", 6.28318530717959],
    ["SQRT(4) + PI - pi", 2],
  ])("evaluates functions and constants: %s = %s", (expression, expected) => {
    expect(evaluateExpression(expression)).toBe(expected);
  });

  it.each([
    ["(1 + 2))", "unexpected ')' at position 8"],
    ["1 +", "unexpected end of expression"],
    ["(1 + 2", "missing ')'"],
    ["2 3", "unexpected '3' at position 3"],
    ["", "the expression is empty"],
    ["1 / 0", "division by zero at position 3"],
    ["5 % (2 - 2)", "division by zero at position 3"],
    ["sqrt(-1)", "sqrt(-1) at position 1 is not a real number"],
    ["10 ^ 400", "too large"],
    ["1e999", "the number 1e999 at position 1 is too large"],
    ["foo(2)", "unknown name 'foo' at position 1; functions: sqrt"],
    ["pow(2)", "pow takes 2 arguments, got 1"],
    ["min()", "min takes at least 1 argument, got 0"],
    ["sqrt 4", "sqrt is a function"],
    ["pi(2)", "pi is a constant"],
    ["2 # 3", "unexpected character '#' at position 3"],
    ["(".repeat(200) + "1" + ")".repeat(200), "nested too deeply"],
  ])("reports %j with the position: %s", (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(message);
  });

  it.each(["process.exit(1)", "constructor.constructor('return process')()", "this", "`1`", "1; 2", "x = 1"])(
    "never runs code: %s is a parse error",
    (expression) => {
      expect(() => evaluateExpression(expression)).toThrow(/^(unexpected|unknown name)/);
    },
  );

  it("returns the expression and its result", async () => {
    await expect(runTool(createCalculateTool(), { expression: "6 * 7" })).resolves.toEqual({
      expression: "6 * 7",
      result: 42,
    });
  });

  it("throws an ExpressionError the executor can report", async () => {
    await expect(runTool(createCalculateTool(), { expression: "1 / 0" })).rejects.toMatchObject({
      name: "ExpressionError",
      message: "division by zero at position 3",
    });
  });
});
