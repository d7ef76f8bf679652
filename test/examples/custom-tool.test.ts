import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { loopdClient } from "../e2e/loopd-client.js";
import { killAllLoopd, spawnLoopd, type LoopdProcess } from "../e2e/loopd-process.js";
import { runProgram } from "../e2e/run-program.js";

// A real process that compiles the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * examples/custom-tool.ts as a reader runs it: a process of its own, the
 * offline mock provider (no keys), and only HTTP, so what docs/tools.md shows is
 * what the example does.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-example-"));
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

beforeAll(async () => {
  // Its working folder is the scratch folder, so no developer's .env is read.
  loopd = await spawnLoopd({
    entry: "examples/custom-tool.ts",
    cwd: scratch,
    env: { DATA_DIR: path.join(scratch, "data"), WORKSPACE_DIR: path.join(scratch, "workspace") },
  });
});

afterAll(async () => {
  await killAllLoopd();
  rmSync(scratch, { recursive: true, force: true });
});

const blocks = (history: any[], type: string) => history.flatMap((m) => m.content.filter((b: any) => b.type === type));

test("a conversation created without a tools list gets the example's tools beside the built-in ones", async () => {
  const conversation = await client.createConversation({});
  expect(conversation.tools).toEqual([
    "get_current_time",
    "calculate",
    "read_file",
    "list_files",
    "search_files",
    "lookup_order",
    "refund_order",
  ]);
  const listed = await fetch(`${loopd.url}/conversations`);
  expect(listed.status).toBe(200);
  const { data } = (await listed.json()) as { data: { id: string }[] };
  expect(data.map((c) => c.id)).toContain(conversation.id);
});

test("the model calls lookup_order and answers from the order it returned", async () => {
  const { id } = await client.createConversation({});
  const reply = await client.send(id, 'lookup_order {"number": "A-1001"}');
  expect(reply.run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
  const order = { number: "A-1001", status: "shipped", items: ["kettle"], total_eur: 39.9 };
  expect(reply.output_text).toBe(`The lookup_order tool returned: ${JSON.stringify(order)}`);

  const history = await client.messages(id);
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  expect(blocks(history, "tool_call")).toEqual([
    { type: "tool_call", id: "mock_call_1", name: "lookup_order", input: { number: "A-1001" } },
  ]);
  const [result] = blocks(history, "tool_result");
  expect(result).toMatchObject({ tool_call_id: "mock_call_1", name: "lookup_order", is_error: false });
  expect(JSON.parse(result.content)).toEqual(order);
});

test("an unknown order number is an error result the model reads, and the run still completes", async () => {
  const { id } = await client.createConversation({});
  const reply = await client.send(id, 'lookup_order {"number": "A-9999"}');
  expect(reply.run.status).toBe("completed");
  expect(reply.output_text).toBe(
    "The lookup_order tool reported an error: no order A-9999; order numbers look like A-1001.",
  );
  const [result] = blocks(await client.messages(id), "tool_result");
  expect(result).toMatchObject({
    name: "lookup_order",
    is_error: true,
    content: "Error: no order A-9999; order numbers look like A-1001",
  });
});

test("refund_order runs a small refund at once and pauses a large one until it is approved", async () => {
  const { id } = await client.createConversation({});
  const small = await client.send(id, 'refund_order {"number": "A-1001", "amount_eur": 5}');
  expect(small.run.status).toBe("completed");
  expect(small.output_text).toBe('The refund_order tool returned: {"number":"A-1001","refunded_eur":5}');

  const large = await client.send(id, 'refund_order {"number": "A-1001", "amount_eur": 30}');
  expect(large.run).toMatchObject({ status: "requires_action", stop_reason: null });
  expect(large.run.required_action.tool_calls).toEqual([
    {
      tool_call_id: "mock_call_2",
      name: "refund_order",
      input: { number: "A-1001", amount_eur: 30 },
      action: "approve",
    },
  ]);
  const approved = await client.answer(id, large.run.id, {
    approvals: [{ tool_call_id: "mock_call_2", approve: true }],
  });
  expect(approved.run.status).toBe("completed");
  expect(approved.output_text).toBe('The refund_order tool returned: {"number":"A-1001","refunded_eur":30}');
});

test("SIGTERM stops the example gracefully", async () => {
  loopd.child.kill("SIGTERM");
  expect(await loopd.exited).toEqual({ code: 0, signal: null });
});

test("a start-up failure is one line, as src/main.ts prints it", async () => {
  const { code, output } = await runProgram("examples/custom-tool.ts", {
    cwd: scratch,
    env: { LLM_PROVIDER: "openai", DATA_DIR: path.join(scratch, "data-failed") },
    timeoutMs: 60_000,
  });
  expect(code).toBe(1);
  expect(output).toMatch(/^loopd cannot start: LLM_PROVIDER is openai but OPENAI_API_KEY is not set/);
});

test("docs/tools.md shows the example's code as the file has it", () => {
  const page = readFileSync(new URL("../../docs/tools.md", import.meta.url), "utf8");
  const example = readFileSync(new URL("../../examples/custom-tool.ts", import.meta.url), "utf8");
  const shown = /^## Tools of your own[\s\S]*?```ts\n([\s\S]*?)\n```/m.exec(page)?.[1];
  expect(shown).toBeDefined();
  expect(shown!.split("\n").length).toBeGreaterThan(20);
  expect(example).toContain(shown!);
});
