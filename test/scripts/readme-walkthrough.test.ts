import { describe, expect, test } from "vitest";
import { matchOutput } from "../../scripts/readme-walkthrough/match-output.js";
import {
  NOT_RUN,
  readWalkthrough,
  REST_OF_WALKTHROUGH,
  restOfWalkthrough,
} from "../../scripts/readme-walkthrough/read-walkthrough.js";

describe("what the README shows against what a command printed", () => {
  test("the same text matches; a different value does not", () => {
    expect(matchOutput({ lang: "", expected: '"12*7 = 84"', actual: '"12*7 = 84"\n' })).toBe(true);
    expect(matchOutput({ lang: "", expected: '"12*7 = 84"', actual: '"12*7 = 85"' })).toBe(false);
    expect(matchOutput({ lang: "", expected: "one\ntwo", actual: "one\ntwo\nthree" })).toBe(false);
  });

  test("… stands for anything left out, and nothing else is loose", () => {
    const expected = 'id: 4\nevent: text.delta\n…\nid: 12\ndata: {"run":{…,"status":"completed","steps":1,…}}';
    const actual =
      'id: 4\nevent: text.delta\ndata: x\n\nid: 5\n\nid: 12\ndata: {"run":{"id":"run_1","status":"completed","steps":1,"model":"m"}}';
    expect(matchOutput({ lang: "", expected, actual })).toBe(true);
    expect(matchOutput({ lang: "", expected, actual: actual.replace('"steps":1', '"steps":2') })).toBe(false);
  });

  test("a … on a line of its own may stand for no line at all, also at the end", () => {
    // A stream cut by curl --max-time ends where it was cut: nothing after the last event shown.
    const expected = 'id: 4\ndata: {"delta":" two"}\n…';
    expect(matchOutput({ lang: "", expected, actual: 'id: 4\ndata: {"delta":" two"}\n\n' })).toBe(true);
    expect(
      matchOutput({ lang: "", expected, actual: 'id: 4\ndata: {"delta":" two"}\n\nid: 5\ndata: {"delta":" three"}' }),
    ).toBe(true);
    expect(matchOutput({ lang: "", expected: "one\n…\nthree", actual: "one\nthree" })).toBe(true);
    expect(matchOutput({ lang: "", expected: "one\n…\nthree", actual: "one\ntwo\nthree" })).toBe(true);
    expect(matchOutput({ lang: "", expected: "one\n…\nthree", actual: "onethree" })).toBe(false);
    expect(matchOutput({ lang: "", expected, actual: 'id: 4\ndata: {"delta":" tw"}' })).toBe(false);
  });

  test("ids, times, weekdays, durations and token counts are any of their kind; other numbers are not", () => {
    const expected =
      '{"id":"conv_0mx3f31orsipb4b4h80aja1l0","at":"2026-11-30T15:22:42.126Z","text":"It is 00:22 on Tuesday","duration_ms":1,"input_tokens":131,"steps":2}';
    const actual =
      '{"id":"conv_0mx54qiripe77fgl80e1qfb2d","at":"2026-12-01T20:08:33.924Z","text":"It is 05:09 on Wednesday","duration_ms":17,"input_tokens":140,"steps":2}';
    expect(matchOutput({ lang: "json", expected, actual })).toBe(true);
    expect(matchOutput({ lang: "json", expected, actual: actual.replace('"steps":2', '"steps":3') })).toBe(false);
  });

  test("JSON compares without the white space between tokens, never inside strings; a jsonc comment is a gap", () => {
    const expected = '{\n  "tools": ["a", "b"], /* run_id, created_at */\n  "text": "two  spaces"\n}';
    expect(
      matchOutput({
        lang: "jsonc",
        expected,
        actual: '{"tools":[\n  "a",\n  "b"\n],"run_id":"r","text":"two  spaces"}',
      }),
    ).toBe(true);
    expect(matchOutput({ lang: "jsonc", expected, actual: '{"tools":["a","b"],"text":"two spaces"}' })).toBe(false);
  });
});

describe("the walkthrough's steps", () => {
  const readme = [
    "## Walkthrough",
    "```sh",
    "echo one",
    "```",
    "```json",
    '{"one":1}',
    "```",
    "Text between: the next block has no output of its own.",
    "```sh",
    "echo two",
    "```",
    "",
    `${NOT_RUN}: needs a key -->`,
    "```sh",
    "curl https://api.example.com",
    "```",
    "## Configuration",
  ].join("\n");

  test("each command block with the output block right after it; a marked block is left out", () => {
    expect(readWalkthrough(readme, { from: "## Walkthrough", to: "## Configuration" })).toEqual([
      { line: 2, heading: "Walkthrough", commands: "echo one", expected: { lang: "json", text: '{"one":1}' } },
      { line: 9, heading: "Walkthrough", commands: "echo two", expected: null },
    ]);
  });

  test("a whole page: from its first line to its last, a marked first block left out too", () => {
    const page = ["# Streaming", "", `${NOT_RUN}: runs on its own -->`, "```sh", "npm run postman", "```", "## Cancel"];
    const more = ["Then:", "```sh", "echo three", "```", "```", "three", "```"];
    expect(readWalkthrough([...page, ...more].join("\n"))).toEqual([
      { line: 9, heading: "Cancel", commands: "echo three", expected: { lang: "", text: "three" } },
    ]);
  });
});

describe("the pages the walkthrough goes on through", () => {
  test("the numbered links of its last section, in order, and nothing else", () => {
    const walkthrough = [
      "# Walkthrough",
      "See [streaming](streaming.md) too.",
      REST_OF_WALKTHROUGH,
      "",
      "1. [Streaming](streaming.md)",
      "2. [Tools](tools.md) (its HTTP endpoint, step by step)",
      "3. [Keys](operations/keys-and-tenants.md)",
      "- [not a step](security.md)",
      "## After",
      "4. [not in the section](metrics.md)",
    ].join("\n");
    expect(restOfWalkthrough(walkthrough)).toEqual(["streaming.md", "tools.md", "operations/keys-and-tenants.md"]);
    expect(() => restOfWalkthrough("# Walkthrough\n")).toThrow(REST_OF_WALKTHROUGH);
  });
});
