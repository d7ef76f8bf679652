import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { agentOfApi } from "../../src/evals/agent-under-test.js";
import { changedCases, columnOf } from "../../src/evals/compare-evals.js";
import { evalCaseSchema } from "../../src/evals/eval-case.js";
import { comparisonReport } from "../../src/evals/eval-report.js";
import { runEvals } from "../../src/evals/run-evals.js";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { systemIn } from "../support/helpers/wire.js";
import { useBrowser, useBuiltPlayground } from "./browser.js";

/**
 * The playground's Agents page in a real browser against a real loopd on a
 * socket, the model faked at the wire: the agents, one's versions and a
 * diff of two, archiving, a conversation from a version; and the Evals page
 * showing a comparison of two versions.
 */
useBuiltPlayground();
const f = useLoopd({ listen: true, env: { LLM_PROVIDER: "anthropic" } });
const browser = useBrowser();

async function inject(method: "POST" | "PATCH" | "GET", url: string, payload?: Record<string, unknown>) {
  const res = await f.loopd.app.inject({ method, url, ...(payload && { payload }) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

/** An agent at version 3: v2 changed the system prompt and the tools, v3 the budget. */
async function threeVersions(name: string) {
  await inject("POST", "/agents", {
    name,
    description: "Answers customers",
    provider: "anthropic",
    system: "You are support v1.",
    tools: ["calculate"],
  });
  await inject("PATCH", `/agents/${name}`, {
    version: 1,
    system: "You are support v2.",
    tools: ["calculate", "get_current_time"],
  });
  await inject("PATCH", `/agents/${name}`, { version: 2, budget: { max_steps: 4 } });
}

describe("the Agents page", () => {
  test("the list, an agent's versions, and a diff of two field by field (the latest two, then any picked)", async () => {
    await threeVersions("support");
    const page = await browser.page();
    await page.goto(`${f.loopd.url}/`);
    await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: "Agents" }).click();
    const row = page.getByRole("row", { name: "support" });
    expect(await row.locator("td").nth(1).innerText()).toBe("3");
    expect(await row.innerText()).toContain("Answers customers");
    await row.getByRole("link", { name: "support" }).click();

    const detail = page.getByRole("region", { name: "Agent support" });
    const versions = detail.getByRole("table", { name: "Versions" }).getByRole("row", { name: /^Version \d$/ });
    await expect.poll(() => versions.allInnerTexts()).toHaveLength(3);
    expect((await versions.allInnerTexts()).map((t) => t.split("\t")[0])).toEqual(["3", "2", "1"]);
    // The latest two at first: only the budget changed.
    const diff = detail.getByLabel("Diff");
    await diff.getByRole("heading", { name: "Version 2 → 3" }).waitFor();
    expect(
      await diff
        .getByRole("row")
        .filter({ has: page.locator("code") })
        .allInnerTexts(),
    ).toEqual([expect.stringMatching(/^budget\s+–\s+\{\s+"max_steps": 4\s+\}$/)]);
    // From version 1: the system prompt and the tools too.
    await detail.getByLabel("Compare from version 1").check();
    await diff.getByRole("heading", { name: "Version 1 → 3" }).waitFor();
    const changed = diff.getByRole("row").filter({ has: page.locator("code") });
    expect(await changed.locator("code").allInnerTexts()).toEqual(["budget", "system", "tools"]);
    expect(await diff.getByRole("row", { name: "system" }).innerText()).toMatch(
      /You are support v1\.\s+You are support v2\./,
    );
    expect(await diff.innerText()).toContain("The same in both: description, provider.");
    await browser.shot(page, "agent-diff");
  });

  test("a new conversation from the agent at a chosen version: pinned to it, its runs use that version's system prompt", async () => {
    await threeVersions("helper");
    const page = await browser.page();
    await page.goto(`${f.loopd.url}/#agents/helper`);
    const detail = page.getByRole("region", { name: "Agent helper" });
    await detail.getByLabel("Version to start from").selectOption("1");
    await detail.getByRole("button", { name: "New conversation from helper@1" }).click();
    await page.getByRole("region", { name: "Conversation" }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
    expect(await inject("GET", `/conversations/${id}`)).toMatchObject({
      agent: { name: "helper", version: 1 },
      system: "You are support v1.",
    });
    await page.getByRole("navigation", { name: "Conversations" }).getByText("helper@1").first().waitFor();
    f.llm.script({ text: "Hello from version 1." });
    await page.getByLabel("Message", { exact: true }).fill("Hi");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await page.getByRole("article", { name: "Answer" }).last().getByText("Hello from version 1.").waitFor();
    expect(systemIn(f.llm.requests.at(-1)!)).toContain("You are support v1.");
  });

  test("archive asks first: Cancel keeps the agent; confirmed, it is archived and no conversation starts from it", async () => {
    await threeVersions("old");
    const page = await browser.page();
    await page.goto(`${f.loopd.url}/#agents/old`);
    const detail = page.getByRole("region", { name: "Agent old" });
    await detail.getByRole("button", { name: "Archive…" }).click();
    const confirm = detail.getByRole("group", { name: "Confirm archiving" });
    expect(await confirm.innerText()).toContain("New conversations from old will be refused.");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect((await inject("GET", "/agents/old")).archived_at).toBeNull();

    await detail.getByRole("button", { name: "Archive…" }).click();
    await confirm.getByRole("button", { name: "Archive old" }).click();
    await detail.getByRole("heading", { name: "old" }).locator(".badge", { hasText: "archived" }).waitFor();
    expect((await inject("GET", "/agents/old")).archived_at).toEqual(expect.any(String));
    expect(await detail.getByRole("button", { name: /^New conversation from old@/ }).isDisabled()).toBe(true);
    await detail.getByRole("button", { name: "← Agents" }).click();
    await page.getByRole("row", { name: "old" }).locator(".badge", { hasText: "archived" }).waitFor();
  });
});

test("the Evals page shows a comparison of two versions: side by side, and the case whose verdict changed", async () => {
  await inject("POST", "/agents", {
    name: "cmp",
    provider: "anthropic",
    system: "Use the clock.",
    tools: ["get_current_time"],
  });
  await inject("PATCH", "/agents/cmp", { version: 1, system: "Never use tools." });
  const conv = await inject("POST", "/conversations", { agent: { name: "cmp", version: 1 }, title: "Time" });
  // The clock is called unless the prompt forbids tools.
  f.llm.respond = (req: RecordedRequest) =>
    systemIn(req).includes("Never use tools")
      ? { text: "No idea." }
      : (req.body.messages as unknown[]).length > 1
        ? { text: "It is noon." }
        : { toolCalls: [{ name: "get_current_time", input: {} }] };
  const sent = await inject("POST", `/conversations/${conv.id}/messages`, { content: "What time is it?" });
  const evalCase = evalCaseSchema.parse(await inject("GET", `/conversations/${conv.id}/runs/${sent.run.id}/eval-case`));
  expect(evalCase.agent).toEqual({ name: "cmp", version: 1 });
  const columns = [];
  for (const version of [1, 2]) {
    const agent = agentOfApi(await inject("GET", `/agents/cmp/versions/${version}`));
    const ran = await runEvals({
      cases: [{ file: "cases/time.json", evalCase }],
      config: f.loopd.config,
      providers: f.loopd.services.providers,
      agent,
    });
    columns.push(columnOf(agent, ran, 1));
  }
  const report = comparisonReport({
    target: "cases",
    startedAt: new Date(),
    options: { liveTools: false, concurrency: 4, minPass: 1 },
    columns,
    changed: changedCases(columns),
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), "loopd-eval-")), "comparison.json");
  writeFileSync(file, JSON.stringify(report));

  const page = await browser.page();
  await page.goto(`${f.loopd.url}/#evals`);
  await page.getByLabel("Open a report").setInputFiles(file);
  const table = page.getByRole("table", { name: "Comparison" });
  // The report is read and drawn after the file is chosen: wait for its last column.
  await table.getByRole("columnheader", { name: "cmp@2" }).waitFor();
  expect(await table.getByRole("columnheader").allInnerTexts()).toEqual(["", "cmp@1", "cmp@2"]);
  expect(await table.getByRole("row", { name: "Pass rate" }).innerText()).toMatch(
    /passed 1\/1 \(100\.0%\)\s+under --min-pass 0\/1 \(0\.0%\)/,
  );
  expect(await table.getByRole("row", { name: "Steps" }).innerText()).toMatch(/Steps\s+2\s+1/);
  await table.getByRole("row", { name: "Latency p50" }).waitFor();
  const changed = page.getByRole("list", { name: "Changed verdict" }).getByRole("listitem");
  await changed.first().waitFor();
  expect(await changed.allInnerTexts()).toEqual([`${evalCase.name} pass → fail`]);
  const row = page.getByRole("table", { name: "Cases" }).getByRole("row", { name: evalCase.name });
  expect(await row.locator(".failures li").allInnerTexts()).toEqual(columns[1]!.cases[0]!.failures);
  await browser.shot(page, "eval-comparison");
});
