import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "vitest";
import { loadEvalCases } from "../../src/evals/load-eval-cases.js";

const GOOD = {
  name: "sums",
  conversation: {
    system: null,
    provider: "openai",
    model: "gpt-test",
    tools: ["calculate"],
    context: null,
    client_tools: [],
  },
  history: [],
  input: [{ type: "text", text: "6*7?" }],
  recorded: [{ name: "calculate", input: { expression: "6*7" }, content: "42", is_error: false }],
  expect: { tool_calls: ["calculate"], final_text: { contains: "42" } },
};

const folder = () => mkdtempSync(path.join(tmpdir(), "loopd-cases-"));
const write = (file: string, value: unknown) =>
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));

test("a folder: every .json file in it and its folders, in name order; a file may hold an array of cases", () => {
  const dir = folder();
  mkdirSync(path.join(dir, "more"));
  write(path.join(dir, "b.json"), { ...GOOD, name: "b" });
  write(path.join(dir, "a.json"), [
    { ...GOOD, name: "a1" },
    { ...GOOD, name: "a2", input: "a text works too" },
  ]);
  write(path.join(dir, "more", "c.json"), { ...GOOD, name: "c" });
  write(path.join(dir, "notes.txt"), "not a case");
  const cases = loadEvalCases(dir);
  expect(cases.map((c) => [path.relative(dir, c.file), c.evalCase.name])).toEqual([
    ["a.json", "a1"],
    ["a.json", "a2"],
    ["b.json", "b"],
    [path.join("more", "c.json"), "c"],
  ]);
});

test("malformed cases: each file named with each field that is wrong, before anything runs", () => {
  const dir = folder();
  write(path.join(dir, "1.json"), {
    ...GOOD,
    expect: { tool_calls: "calculate", final_text: { regex: "(?<=a)b" }, max_step: 3 },
  });
  write(path.join(dir, "2.json"), {
    ...GOOD,
    conversation: { ...GOOD.conversation, provider: "gemini" },
    recorded: [{ name: "calculate" }],
  });
  write(path.join(dir, "3.json"), "{ not json");
  write(path.join(dir, "4.json"), [GOOD, { ...GOOD, name: undefined }]);
  expect(() => loadEvalCases(dir)).toThrow(
    new RegExp(
      [
        "^cases are malformed:",
        `  ${dir}/1\\.json: expect\\.tool_calls: .*expected array, received string`,
        `  ${dir}/1\\.json: expect\\.final_text\\.regex: is not a regular expression RE2 can run: .*`,
        `  ${dir}/1\\.json: expect: unknown field max_step`,
        `  ${dir}/2\\.json: conversation\\.provider: .*"anthropic"\\|"openai"\\|"mock"`,
        `  ${dir}/2\\.json: recorded\\[0\\]\\.input: is required \\(record\\)`,
        `  ${dir}/2\\.json: recorded\\[0\\]\\.content: is required \\(string\\)`,
        `  ${dir}/2\\.json: recorded\\[0\\]\\.is_error: is required \\(boolean\\)`,
        `  ${dir}/3\\.json: not JSON: .*`,
        `  ${dir}/4\\.json: \\[1\\]\\.name: is required \\(string\\)$`,
      ].join("\n"),
    ),
  );
});

test("a path that is not there, or a folder without cases, is said as such", () => {
  expect(() => loadEvalCases("/nowhere/cases")).toThrow("/nowhere/cases: no such file or folder");
  const dir = folder();
  expect(() => loadEvalCases(dir)).toThrow(`${dir}: the folder holds no .json case files`);
});
