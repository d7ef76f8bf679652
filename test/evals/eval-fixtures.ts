import { z } from "zod";
import type { EvalCase } from "../../src/evals/eval-case.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { FakeTurn, RecordedRequest } from "../support/fake-llm/server.js";
import type { LoopdFixture } from "../support/helpers/use-loopd.js";
import { api } from "../support/helpers/api.js";

/** Every time `lookup_order` really ran, with its input. */
export const lookups: { number: string }[] = [];

/** Calls of `hold` in flight now, and the most there ever were at once. */
export const holds = { inFlight: 0, most: 0, arrivals: [] as (() => void)[] };

/** The built-ins, plus a tool that counts its runs and one that waits for a second call to come before either answers. */
export function evalTools() {
  return [
    ...createBuiltinTools(),
    defineTool({
      name: "lookup_order",
      description: "An order by its number.",
      input: z.object({ number: z.string() }),
      execute: ({ number }) => {
        lookups.push({ number });
        return { number, status: "shipped", live: true };
      },
    }),
    defineTool({
      name: "hold",
      description: "Answers once another call of it is in flight.",
      input: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        holds.most = Math.max(holds.most, ++holds.inFlight);
        // A pair meets: the second call releases the first and itself.
        const waiting = holds.arrivals.shift();
        if (waiting) waiting();
        else await new Promise<void>((resolve) => holds.arrivals.push(resolve));
        holds.inFlight--;
        return `held ${id}`;
      },
    }),
  ];
}

/** A run made through loopd's HTTP API on the fake LLM, and its case from the eval-case route. */
export async function recordCase(
  f: LoopdFixture,
  {
    provider,
    content,
    turns,
    settings = {},
  }: { provider: "anthropic" | "openai"; content: string; turns: FakeTurn[]; settings?: Record<string, unknown> },
) {
  const client = api(f.loopd.app);
  const conv = await client.createConversation({
    provider,
    title: content,
    tools: ["calculate", "get_current_time", "lookup_order"],
    ...settings,
  });
  f.llm.script(...turns);
  const sent = (await client.send(conv.id, { content })).json();
  const res = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${conv.id}/runs/${sent.run.id}/eval-case`,
  });
  if (res.statusCode !== 200) throw new Error(`eval-case: ${res.statusCode} ${res.body}`);
  f.llm.reset();
  return { evalCase: res.json() as EvalCase, run: sent.run };
}

/** The tool results a model request carries, in either wire format. */
export function toolResultsOf(req: RecordedRequest): { content: string; is_error: boolean }[] {
  const messages = req.body.messages as any[];
  if (req.api === "openai")
    return messages.filter((m) => m.role === "tool").map((m) => ({ content: String(m.content), is_error: false }));
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content
          .filter((b: any) => b.type === "tool_result")
          .map((b: any) => ({
            content: typeof b.content === "string" ? b.content : b.content.map((c: any) => c.text).join(""),
            is_error: b.is_error === true,
          }))
      : [],
  );
}

/** The text of the request's first user message: which case a request belongs to. */
export function firstUserText(req: RecordedRequest): string {
  const first = (req.body.messages as any[]).find((m) => m.role === "user");
  return typeof first.content === "string" ? first.content : first.content.map((b: any) => b.text ?? "").join("");
}

/** Answers each case's requests from its own turns (by its first user text and the model calls it made so far): cases may run in any order. */
export function respondByCase(turnsOf: Record<string, FakeTurn[]>) {
  return (req: RecordedRequest): FakeTurn => {
    const turns = turnsOf[firstUserText(req)] ?? [{ status: 500, message: "no turns for this case" }];
    const made = (req.body.messages as any[]).filter((m) => m.role === "assistant").length;
    return turns[Math.min(made, turns.length - 1)]!;
  };
}
