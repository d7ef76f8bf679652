import type { FakeTurn, RecordedRequest } from "../../test/support/fake-llm/server.js";

export type Scenario = "text" | "tool";

export const SCENARIOS: Record<
  Scenario,
  { label: string; prompt: string; respond: (req: RecordedRequest) => FakeTurn }
> = {
  text: {
    label: "text answer (1 model call)",
    prompt: "Say ok.",
    respond: () => ({ text: "ok" }),
  },
  tool: {
    label: "tool round trip (2 model calls + calculate)",
    prompt: "What is 6*7?",
    respond: (req) => {
      const messages = req.body.messages as Array<{ role: string }>;
      return messages.at(-1)?.role === "tool"
        ? { text: "6*7 = 42" }
        : { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] };
    },
  },
};
