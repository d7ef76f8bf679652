import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

/*
 * README.md and docs/: every relative link leads to a file that exists, and
 * every #anchor to a heading of the page it names (GitHub's anchors). The
 * README stays a front page: at most 250 lines, the rest in docs/.
 */
const repo = fileURLToPath(new URL("..", import.meta.url));

/** The page's lines outside fenced code blocks. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split("\n")
    .filter((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return !fenced && !/^\s*```/.test(line);
    })
    .join("\n");
}

/** The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as hyphens, -1, -2 … on repeats. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text] of prose(markdown).matchAll(/^#{1,6} +(.*?)#*\s*$/gm)) {
    const slug = text!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
      .replace(/ /g, "-");
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  return anchors;
}

/** The targets of the page's links and images (`[text](target)`), outside code. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`]*`/g, "code");
  return [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** Each link of `file` (a path under `root`) that leads nowhere: a missing file, or an anchor its page does not have. */
function brokenLinks(root: string, file: string): string[] {
  const from = path.join(root, file);
  const markdown = readFileSync(from, "utf8");
  return linksOf(markdown).flatMap((link) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return []; // https:, mailto:: not ours to check
    const [target = "", anchor] = link.split("#");
    const to = target === "" ? from : path.resolve(path.dirname(from), decodeURIComponent(target));
    if (!existsSync(to)) return [`${file}: ${link} (no file ${path.relative(root, to)})`];
    if (anchor === undefined || !to.endsWith(".md")) return [];
    return anchorsOf(readFileSync(to, "utf8")).has(anchor) ? [] : [`${file}: ${link} (no heading #${anchor})`];
  });
}

function docsPages(root: string, folder = "docs"): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return docsPages(root, file);
    return entry.name.endsWith(".md") ? [file] : [];
  });
}

const pages = ["README.md", ...docsPages(repo)];

test("README.md and every page of docs/ link only to files and headings that exist", () => {
  expect(pages.length).toBeGreaterThan(10);
  expect(pages.flatMap((page) => brokenLinks(repo, page))).toEqual([]);
});

test("the README links to every page of docs/", () => {
  const linked = new Set(linksOf(readFileSync(path.join(repo, "README.md"), "utf8")).map((l) => l.split("#")[0]));
  expect(pages.filter((page) => page !== "README.md" && !linked.has(page))).toEqual([]);
});

test("the README is a front page: at most 250 lines", () => {
  expect(readFileSync(path.join(repo, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(250);
});

test("a missing file, a missing heading and a link to another page's missing heading are each reported", () => {
  const root = mkdtempSync(path.join(tmpdir(), "loopd-docs-links-"));
  try {
    mkdirSync(path.join(root, "docs"));
    writeFileSync(
      path.join(root, "docs", "a.md"),
      [
        "# Page A",
        "## Only `its` own name: (really)",
        "## Only `its` own name: (really)",
        "See [b](b.md), [b's part](b.md#part-two), [here](#only-its-own-name-really-1) and [it](../src/x.ts).",
        "Broken: [gone](missing.md), [no part](b.md#part-three), [no such](#nowhere), ![pic](pic.png).",
        "Not links: `[x](nope.md)`, [site](https://example.com/x.md).",
        "```md",
        "[in code](nope.md)",
        "```",
      ].join("\n"),
    );
    writeFileSync(path.join(root, "docs", "b.md"), "# B\n\n## Part two\n");
    mkdirSync(path.join(root, "src"));
    writeFileSync(path.join(root, "src", "x.ts"), "");
    expect(brokenLinks(root, "docs/a.md")).toEqual([
      "docs/a.md: missing.md (no file docs/missing.md)",
      "docs/a.md: b.md#part-three (no heading #part-three)",
      "docs/a.md: #nowhere (no heading #nowhere)",
      "docs/a.md: pic.png (no file docs/pic.png)",
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
