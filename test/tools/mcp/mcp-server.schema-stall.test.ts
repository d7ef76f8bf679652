/**
 * A server's tool list must not hold loopd's event loop. Listing once
 * compiled every input schema (Ajv + RE2) on the main
 * thread; ten 60 KB schemas (well under the 64 KB and 1,000-tool limits)
 * are listed again on every notifications/tools/list_changed.
 */
import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { beforeAll, expect, test, vi } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const SERVER = path.resolve(import.meta.dirname, "../../support/mcp/hostile-stdio.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "loopd-mcp-"));
// The servers' folder: they run as TOOL_RUN_AS_USER when the tests run as root, and write their records here.
chmodSync(dir, 0o777);
const props: Record<string, unknown> = {};
for (let i = 0; i < 1200; i++) props[`p${i}`] = { type: "string", pattern: `^(a|b)*c{${i % 1000}}$` };
const big = (n: number) => ({
  name: `big${n}`,
  inputSchema: { type: "object", properties: props, description: String(n) },
  annotations: { readOnlyHint: true },
});
const tools = [
  { name: "reverse", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  ...Array.from({ length: 10 }, (_, n) => big(n)),
];

function toolsFile() {
  const list = path.join(dir, "list.json");
  writeFileSync(list, JSON.stringify(tools));
  const file = path.join(dir, "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp: [{ name: "big", command: process.execPath, args: [SERVER], env: { TOOLS_PATH: list }, cwd: dir }],
    }),
  );
  return file;
}
const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile() } }));
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();

beforeAll(async () => {
  await vi.waitFor(async () => expect((await get("/tools/servers")).data[0].status).toBe("ready"), {
    timeout: 120_000,
    interval: 100,
  });
}, 130_000);

test("listing a server's tools again (list_changed) never blocks the event loop for long", async () => {
  const conv = await api(f.loopd.app).createConversation({ provider: "openai", tools: ["big__reverse"] });
  f.llm.script({ toolCalls: [{ name: "big__reverse", input: {} }] }, { text: "Done." });
  const version = (await get("/tools")).data.filter((t: { server: string }) => t.server === "big").at(-1).name;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  await api(f.loopd.app).send(conv.id, { content: "go" });
  await vi.waitFor(
    async () =>
      expect((await get("/tools")).data.filter((t: { server: string }) => t.server === "big").at(-1).name).not.toBe(
        version,
      ),
    { timeout: 60_000, interval: 50 },
  );
  delay.disable();
  expect(Math.round(delay.max / 1e6), "longest event-loop stall, ms").toBeLessThan(1_000);
}, 70_000);
