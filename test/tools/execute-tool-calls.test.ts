import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolCallBlock } from "../../src/core/messages.js";
import { defineTool, type Tool } from "../../src/tools/define-tool.js";
import {
  DEFAULT_TOOL_CONCURRENCY,
  executeToolCalls,
  type ToolCallOutcome,
} from "../../src/tools/execute-tool-calls.js";
import { createToolRegistry } from "../../src/tools/tool-registry.js";

let nextId = 0;
function call(name: string, input: Record<string, unknown> = {}, extra: Partial<ToolCallBlock> = {}): ToolCallBlock {
  return { type: "tool_call", id: `call_${++nextId}`, name, input, ...extra };
}

async function collect(gen: AsyncGenerator<ToolCallOutcome>): Promise<ToolCallOutcome[]> {
  const out: ToolCallOutcome[] = [];
  for await (const outcome of gen) out.push(outcome);
  return out;
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tool that logs its start and end into `log` and runs `body` in between. */
function logged(
  log: string[],
  name: string,
  { readOnly, body = async () => {} }: { readOnly: boolean; body?: () => Promise<unknown> },
): Tool {
  return defineTool({
    name,
    description: name,
    input: z.object({}),
    readOnly,
    execute: async () => {
      log.push(`${name}:start`);
      const value = await body();
      log.push(`${name}:end`);
      return value ?? name;
    },
  });
}

const run = (tools: Tool[], calls: ToolCallBlock[], opts: Partial<Parameters<typeof executeToolCalls>[0]> = {}) =>
  collect(executeToolCalls({ calls, registry: createToolRegistry(tools), workspaceDir: "/tmp", ...opts }));

describe("executeToolCalls: order and concurrency", () => {
  it("runs consecutive read-only calls in parallel and still yields in the model's order", async () => {
    const log: string[] = [];
    const secondDone = deferred();
    // The slow first call can only finish once the fast second one has run:
    // run one after the other, this would time out.
    const slow = logged(log, "slow", { readOnly: true, body: () => secondDone.promise });
    const fast = logged(log, "fast", { readOnly: true, body: async () => secondDone.resolve() });
    const outcomes = await run([slow, fast], [call("slow"), call("fast")], { defaultTimeoutMs: 2000 });

    expect(outcomes.map((o) => [o.result.name, o.status])).toEqual([
      ["slow", "ok"],
      ["fast", "ok"],
    ]);
    expect(log.indexOf("fast:start")).toBeLessThan(log.indexOf("slow:end"));
  });

  it("yields an outcome as soon as it and all earlier ones are done", async () => {
    const gate = deferred();
    const first = defineTool({ name: "first", description: "", input: z.object({}), readOnly: true, execute: () => 1 });
    const second = defineTool({
      name: "second",
      description: "",
      input: z.object({}),
      readOnly: true,
      execute: () => gate.promise.then(() => 2),
    });
    const gen = executeToolCalls({
      calls: [call("first"), call("second")],
      registry: createToolRegistry([first, second]),
      workspaceDir: "/tmp",
    });
    const a = await gen.next();
    expect(a.value).toMatchObject({ result: { name: "first", content: "1" } });
    gate.resolve();
    const b = await gen.next();
    expect(b.value).toMatchObject({ result: { name: "second", content: "2" } });
    expect((await gen.next()).done).toBe(true);
  });

  it("runs non-read-only calls one by one, each after everything before it", async () => {
    const log: string[] = [];
    const started: string[] = [];
    const slowRead = logged(log, "read1", { readOnly: true, body: () => sleep(20) });
    const write1 = logged(log, "write1", { readOnly: false, body: () => sleep(20) });
    const write2 = logged(log, "write2", { readOnly: false });
    const read2 = logged(log, "read2", { readOnly: true });
    await run([slowRead, write1, write2, read2], [call("read1"), call("write1"), call("write2"), call("read2")], {
      onStart: (c) => started.push(c.name),
    });
    expect(log).toEqual([
      "read1:start",
      "read1:end",
      "write1:start",
      "write1:end",
      "write2:start",
      "write2:end",
      "read2:start",
      "read2:end",
    ]);
    expect(started).toEqual(["read1", "write1", "write2", "read2"]);
  });

  it("calls onStart for a waiting call only when it actually begins", async () => {
    const gate = deferred();
    const events: string[] = [];
    const blocker = defineTool({
      name: "blocker",
      description: "",
      input: z.object({}),
      execute: async () => {
        events.push("blocker running");
        await gate.promise;
      },
    });
    const after = defineTool({ name: "after", description: "", input: z.object({}), execute: () => "x" });
    const done = run([blocker, after], [call("blocker"), call("after")], {
      onStart: (c) => events.push(`start ${c.name}`),
    });
    await sleep(10);
    expect(events).toEqual(["start blocker", "blocker running"]);
    gate.resolve();
    await done;
    expect(events).toEqual(["start blocker", "blocker running", "start after"]);
  });

  /** A read-only tool that notes how many of its calls run at once, and returns its input's n. */
  function counting() {
    const seen = { running: 0, most: 0 };
    const tool = defineTool({
      name: "count",
      description: "",
      input: z.object({ n: z.number() }),
      readOnly: true,
      execute: async ({ n }) => {
        seen.most = Math.max(seen.most, ++seen.running);
        // A few turns of the event loop: without a bound, every call would have begun by now.
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
        seen.running--;
        return n;
      },
    });
    return { tool, seen };
  }

  it("runs at most `concurrency` read-only calls at once, and still yields in the model's order", async () => {
    const { tool, seen } = counting();
    const calls = Array.from({ length: 10 }, (_, n) => call("count", { n }));
    const outcomes = await run([tool], calls, { concurrency: 3 });
    expect(seen.most).toBe(3);
    expect(outcomes.map((o) => o.result.content)).toEqual(calls.map((_, n) => String(n)));
  });

  it(`runs at most ${DEFAULT_TOOL_CONCURRENCY} read-only calls at once by default`, async () => {
    const { tool, seen } = counting();
    const outcomes = await run(
      [tool],
      Array.from({ length: 100 }, (_, n) => call("count", { n })),
    );
    expect(seen.most).toBe(DEFAULT_TOOL_CONCURRENCY);
    expect(outcomes.every((o) => o.status === "ok")).toBe(true);
  });

  it("measures durationMs with the injected clock", async () => {
    let t = 1000;
    const tick = defineTool({ name: "tick", description: "", input: z.object({}), execute: () => void (t += 250) });
    const [outcome] = await run([tick], [call("tick")], { now: () => t });
    expect(outcome!.durationMs).toBe(250);
  });
});

describe("executeToolCalls: results", () => {
  const returning = (name: string, value: unknown) =>
    defineTool({ name, description: "", input: z.object({}), execute: () => value });

  it("sends strings as they are, other values as JSON and undefined as (no output)", async () => {
    const outcomes = await run(
      [returning("s", "plain text"), returning("o", { a: [1, "b"] }), returning("u", undefined), returning("n", null)],
      [call("s"), call("o"), call("u"), call("n")],
    );
    expect(outcomes.map((o) => o.result.content)).toEqual(["plain text", '{"a":[1,"b"]}', "(no output)", "null"]);
    expect(outcomes.every((o) => o.status === "ok" && !o.result.is_error)).toBe(true);
  });

  it("reports a result that cannot be serialized", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const [outcome] = await run([returning("cyc", cyclic)], [call("cyc")]);
    expect(outcome!.status).toBe("error");
    expect(outcome!.result.content).toMatch(/could not be serialized: TypeError: .*circular/i);
  });

  it("copies the call's id and name into the result verbatim", async () => {
    const odd = call("s", {}, { id: "toolu_01AbC-xyz/ü:1" });
    const [outcome] = await run([returning("s", "x")], [odd]);
    expect(outcome!.result).toEqual({
      type: "tool_result",
      tool_call_id: "toolu_01AbC-xyz/ü:1",
      name: "s",
      content: "x",
      is_error: false,
    });
    expect(outcome!.call).toBe(odd);
  });

  it("clips a long result keeping head and tail", async () => {
    const big = "A".repeat(20_000) + "Z".repeat(20_000);
    const [outcome] = await run([returning("big", big)], [call("big")]);
    const content = outcome!.result.content;
    expect(content.length).toBeLessThanOrEqual(16_384);
    expect(content.startsWith("AAAA")).toBe(true);
    expect(content.endsWith("ZZZZ")).toBe(true);
    const leftOut = Number(/\[… (\d+) characters left out …\]/.exec(content)![1]);
    const kept = content.replace(/\n\n\[… \d+ characters left out …\]\n\n/, "").length;
    expect(leftOut).toBe(big.length - kept);
  });
});

describe("executeToolCalls: failures become results the model can act on", () => {
  const calculate = defineTool({
    name: "calculate",
    description: "",
    input: z.object({ expression: z.string(), options: z.object({ digits: z.number() }).optional() }),
    readOnly: true,
    execute: ({ expression }) => expression,
  });
  const other = defineTool({ name: "other", description: "", input: z.object({}), execute: () => "x" });

  it("names an unregistered tool and lists the available ones", async () => {
    const [outcome] = await run([calculate, other], [call("delete_everything")]);
    expect(outcome!.status).toBe("error");
    expect(outcome!.result.is_error).toBe(true);
    expect(outcome!.result.content).toBe('Unknown tool "delete_everything". Available tools: calculate, other.');
  });

  it("treats a registered tool outside `allowed` as unknown and lists only the allowed ones", async () => {
    let ran = false;
    const sneaky = defineTool({ name: "sneaky", description: "", input: z.object({}), execute: () => (ran = true) });
    const [outcome] = await run([calculate, sneaky], [call("sneaky")], { allowed: ["calculate"] });
    expect(ran).toBe(false);
    expect(outcome!.result.content).toBe('Unknown tool "sneaky". Available tools: calculate.');
  });

  it("says the arguments are not valid JSON, with JSON.parse's message", async () => {
    const [outcome] = await run([calculate], [call("calculate", {}, { raw_arguments: '{"expression": "1+' })]);
    let parseMessage = "";
    try {
      JSON.parse('{"expression": "1+');
    } catch (error) {
      parseMessage = (error as Error).message;
    }
    expect(outcome!.status).toBe("error");
    expect(outcome!.result.content).toContain("Invalid arguments for calculate: they are not valid JSON");
    expect(outcome!.result.content).toContain(parseMessage);
  });

  it("says the arguments must be a JSON object when they are valid JSON of another kind", async () => {
    const [outcome] = await run([calculate], [call("calculate", {}, { raw_arguments: "[1,2]" })]);
    expect(outcome!.result.content).toContain("must be a JSON object, got an array");
  });

  it("lists each failing field with what was expected and what was received", async () => {
    const [wrongType, nested, missing] = await run(
      [calculate],
      [
        call("calculate", { expression: 42 }),
        call("calculate", { expression: "1", options: { digits: "two" } }),
        call("calculate", {}),
      ],
    );
    expect(wrongType!.result.content).toBe(
      "Invalid arguments for calculate: expression: expected string, received number",
    );
    expect(nested!.result.content).toBe(
      "Invalid arguments for calculate: options.digits: expected number, received string",
    );
    expect(missing!.result.content).toBe(
      "Invalid arguments for calculate: expression: expected string, received undefined",
    );
  });

  it("adds the received value where zod's message leaves it out", async () => {
    const pick = defineTool({
      name: "pick",
      description: "",
      input: z.object({ color: z.enum(["red", "blue"]) }),
      execute: () => "x",
    });
    const [outcome] = await run([pick], [call("pick", { color: "green" })]);
    expect(outcome!.result.content).toBe(
      'Invalid arguments for pick: color: expected one of "red"|"blue", received "green"',
    );
  });

  it("reports an exception's type and message without the stack", async () => {
    const boom = defineTool({
      name: "boom",
      description: "",
      input: z.object({}),
      execute: async () => {
        throw new TypeError("cannot read the moon");
      },
    });
    const syncBoom = defineTool({
      name: "sync_boom",
      description: "",
      input: z.object({}),
      execute: () => {
        throw new RangeError("too far");
      },
    });
    const weird = defineTool({
      name: "weird",
      description: "",
      input: z.object({}),
      execute: () => Promise.reject({ code: 7 }),
    });
    const outcomes = await run([boom, syncBoom, weird], [call("boom"), call("sync_boom"), call("weird")]);
    expect(outcomes.map((o) => o.result.content)).toEqual([
      "TypeError: cannot read the moon",
      "RangeError: too far",
      'the tool failed with a non-Error value: {"code":7}',
    ]);
    expect(outcomes.every((o) => o.status === "error")).toBe(true);
    expect(outcomes.some((o) => o.result.content.includes("    at "))).toBe(false);
  });

  it("times out a tool after its own timeoutMs and aborts the tool's signal", async () => {
    let toolSignal: AbortSignal | undefined;
    const hang = defineTool({
      name: "hang",
      description: "",
      input: z.object({}),
      timeoutMs: 50,
      readOnly: true,
      execute: (_input, ctx) => {
        toolSignal = ctx.signal;
        return new Promise(() => {}); // ignores the signal: the executor must not wait for it
      },
    });
    const [outcome] = await run([hang], [call("hang")]);
    expect(outcome!.status).toBe("timeout");
    expect(outcome!.result.is_error).toBe(true);
    expect(outcome!.result.content).toBe("hang timed out after 0.05 s; try a narrower request.");
    expect(toolSignal?.aborted).toBe(true);
    expect((toolSignal?.reason as Error).name).toBe("TimeoutError");
  });

  it("uses defaultTimeoutMs for tools without their own", async () => {
    const hang = defineTool({
      name: "hang",
      description: "",
      input: z.object({}),
      execute: () => new Promise(() => {}),
    });
    const [outcome] = await run([hang], [call("hang")], { defaultTimeoutMs: 30 });
    expect(outcome!.result.content).toBe("hang timed out after 0.03 s; try a narrower request.");
  });
});

describe("executeToolCalls: cancellation", () => {
  it("cancels the running call, starts no later call, and answers every call exactly once", async () => {
    const controller = new AbortController();
    const started: string[] = [];
    let toolSignal: AbortSignal | undefined;
    let laterRan = false;
    const writer = defineTool({
      name: "writer",
      description: "",
      input: z.object({}),
      execute: (_input, ctx) => {
        toolSignal = ctx.signal;
        setTimeout(() => controller.abort(), 10);
        return new Promise(() => {});
      },
    });
    const later = defineTool({ name: "later", description: "", input: z.object({}), execute: () => (laterRan = true) });
    const reader = defineTool({
      name: "reader",
      description: "",
      input: z.object({}),
      readOnly: true,
      execute: () => 1,
    });
    const calls = [call("writer"), call("later"), call("reader")];
    const outcomes = await run([writer, later, reader], calls, {
      signal: controller.signal,
      onStart: (c) => started.push(c.name),
    });

    expect(outcomes.map((o) => o.result.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(outcomes.map((o) => o.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(outcomes[0]!.result.content).toContain("cancelled before it finished");
    expect(outcomes[1]!.result.content).toContain("cancelled before it started");
    expect(outcomes.every((o) => o.result.is_error)).toBe(true);
    expect(started).toEqual(["writer"]);
    expect(laterRan).toBe(false);
    expect(toolSignal?.aborted).toBe(true);
  });

  /** A read-only tool that never finishes, and cancels the run shortly after it begins. */
  const stuckThenCancel = (controller: AbortController) =>
    defineTool({
      name: "stuck",
      description: "",
      input: z.object({}),
      readOnly: true,
      execute: () => {
        setTimeout(() => controller.abort(), 10);
        return new Promise(() => {});
      },
    });

  it("keeps the result of a parallel call that finished before the cancellation", async () => {
    const controller = new AbortController();
    const quick = defineTool({
      name: "quick",
      description: "",
      input: z.object({}),
      readOnly: true,
      execute: () => "done",
    });
    const stuck = stuckThenCancel(controller);
    const outcomes = await run([quick, stuck], [call("stuck"), call("quick")], { signal: controller.signal });
    expect(outcomes.map((o) => o.status)).toEqual(["cancelled", "ok"]);
  });

  it("answers calls still waiting for a slot as cancelled before they started", async () => {
    const controller = new AbortController();
    const started: string[] = [];
    const stuck = stuckThenCancel(controller);
    const calls = [call("stuck"), call("stuck"), call("stuck")];
    const outcomes = await run([stuck], calls, {
      concurrency: 1,
      signal: controller.signal,
      onStart: (c) => started.push(c.id),
    });
    expect(outcomes.map((o) => o.result.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(outcomes.map((o) => o.result.content)).toEqual([
      expect.stringContaining("cancelled before it finished"),
      expect.stringContaining("cancelled before it started"),
      expect.stringContaining("cancelled before it started"),
    ]);
    expect(started).toEqual([calls[0]!.id]);
  });

  it("runs many parallel calls under one run signal without a listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const gate = deferred();
      const wait = defineTool({
        name: "wait",
        description: "",
        input: z.object({}),
        readOnly: true,
        execute: () => gate.promise,
      });
      const done = run(
        [wait],
        Array.from({ length: 25 }, () => call("wait")),
        { signal: new AbortController().signal },
      );
      await sleep(10);
      gate.resolve();
      expect(await done).toHaveLength(25);
      await sleep(10);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("starts nothing when the run is already cancelled", async () => {
    const started: string[] = [];
    const tool = defineTool({ name: "t", description: "", input: z.object({}), execute: () => "x" });
    const outcomes = await run([tool], [call("t"), call("t")], {
      signal: AbortSignal.abort(),
      onStart: (c) => started.push(c.name),
    });
    expect(outcomes).toHaveLength(2);
    expect(outcomes.every((o) => o.status === "cancelled" && o.durationMs === 0)).toBe(true);
    expect(started).toEqual([]);
  });
});
