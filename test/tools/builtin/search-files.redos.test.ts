import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test } from "vitest";
import { createSearchFilesTool } from "../../../src/tools/builtin/search-files.js";
import { isEvent, readSse, type SseEvent } from "../../support/helpers/sse-client.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

/*
 * A regular expression that backtracks catastrophically: /^(a+)+$/ on 29
 * a's and a "!" takes some 2^29 steps, about 15 s. It once ran on the main
 * thread, so the whole service froze, the tool's timeout could not fire and
 * the call was reported ok after it. loopd listens on a real socket here, so
 * a second request can reach it while the tool runs.
 */

const TIMEOUT_MS = 300;
const f = useLoopd({ listen: true, env: { TOOL_TIMEOUT_MS: String(TIMEOUT_MS) } });
const writeRedosFile = () =>
  writeFile(path.join(f.loopd.config.tools.workspaceDir, "redos.txt"), `${"a".repeat(29)}!\n`);
const json = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

test("a catastrophic regex in search_files times out, and loopd answers other requests meanwhile", async () => {
  await writeRedosFile();
  f.llm.script(
    { toolCalls: [{ name: "search_files", input: { pattern: "/^(a+)+$/", path: "redos.txt" } }] },
    { text: "Gave up." },
  );
  const conv = (await (await fetch(`${f.loopd.url}/conversations`, json({ provider: "anthropic" }))).json()) as {
    id: string;
  };

  const stream = await fetch(
    `${f.loopd.url}/conversations/${conv.id}/messages`,
    json({ content: "Search it.", stream: true }),
  );
  // When each thing reached this test, in order: the health check is sent
  // once the tool has started, and must be answered before its result arrives.
  const seen: string[] = [];
  let health: Promise<number> | undefined;
  let completed: SseEvent | undefined;
  for await (const item of readSse(stream)) {
    if (!isEvent(item)) continue;
    if (item.event === "tool_call.started") {
      health = fetch(`${f.loopd.url}/healthz`).then((res) => {
        seen.push("healthz answered");
        return res.status;
      });
    }
    if (item.event === "tool_call.completed") {
      seen.push("tool call completed");
      completed = item;
    }
  }

  expect(await health).toBe(200);
  expect(seen).toEqual(["healthz answered", "tool call completed"]);
  expect(completed?.data).toMatchObject({
    name: "search_files",
    is_error: true,
    content: `search_files timed out after ${TIMEOUT_MS / 1000} s; try a narrower request.`,
  });
  expect(completed?.data.duration_ms).toBeLessThan(2 * TIMEOUT_MS);
});

test("search_files stops a running regex when its signal aborts", async () => {
  await writeRedosFile();
  const tool = createSearchFilesTool();
  const input = tool.input.parse({ pattern: "/^(a+)+$/", path: "redos.txt" });
  // The executor aborts the tool's signal like this on its timeout.
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  await expect(
    tool.execute(input, {
      signal,
      workspaceDir: f.loopd.config.tools.workspaceDir,
      maxResultChars: 16_384,
      toolCallId: "call_1",
      conversationId: null,
      runId: null,
    }),
  ).rejects.toMatchObject({ name: "TimeoutError" });
});
