import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Screenshots of the browser tests: CI's artifacts (gitignored). */
export const ARTIFACTS = path.join(ROOT, "test-results", "web");
/** Debian's chromium (`apt-get install chromium`; .ci/run installs it); CHROMIUM_PATH names another. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Builds the playground as `npm start` does (only when web/ changed since
 * the last build), before loopd starts and reads it. Call before useLoopd,
 * so this hook runs first.
 */
export function useBuiltPlayground(): void {
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(ROOT, "scripts", "build-if-stale.mjs"), "--only=web"], {
      cwd: ROOT,
      stdio: "pipe",
    });
  }, 120_000);
}

/** One headless Chromium for the file; each test opens its own page (a fresh context: its own storage). `args`: Chromium's own switches besides `--no-sandbox`. */
export function useBrowser({ args = [] }: { args?: string[] } = {}) {
  let browser: Browser;
  /** What went wrong in the pages of the test: script errors, console errors (a CSP violation is one). */
  let problems: string[] = [];
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", ...args] });
  });
  afterEach(() => {
    const seen = problems;
    problems = [];
    expect(seen).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async page({ width = 1280, height = 860 }: { width?: number; height?: number } = {}): Promise<Page> {
      const context = await browser.newContext({ viewport: { width, height } });
      // Under vitest's 30 s: a wait that fails says what it waited for.
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
      page.on("console", (m) => {
        // A refused request (a 4xx a test asks for) is the page's to show, not a fault of it.
        if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
          problems.push(`console: ${m.text()}`);
      });
      return page;
    },
    shot: (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) }),
  };
}
