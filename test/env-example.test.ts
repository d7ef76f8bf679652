import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "../src/config.js";

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), "utf8");

/** `# NAME=value` lines of .env.example: each variable, with the default it shows. */
const example = new Map([...read(".env.example").matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));

test(".env.example lists every variable loopd reads, and nothing else", () => {
  expect([...example.keys()].sort()).toEqual([...CONFIG_VARIABLES].sort());
});

test("the values .env.example shows are the defaults: uncommented, they change nothing", () => {
  const shown = Object.fromEntries([...example].filter(([, value]) => value !== ""));
  expect(loadConfig(shown)).toEqual(loadConfig({}));
});

test("the configuration page's table names every variable too", () => {
  const page = read("docs/operations/configuration.md");
  const table = page.slice(page.indexOf("# Configuration"), page.indexOf("\n## ", page.indexOf("# Configuration") + 1));
  const named = new Set(
    [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)`(?:, `([A-Z][A-Z0-9_]*)`)*/gm)].flatMap((m) =>
      [...m[0].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((n) => n[1]!),
    ),
  );
  expect(CONFIG_VARIABLES.filter((v) => !named.has(v))).toEqual([]);
});
