import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { userTextsIn } from "../support/helpers/wire.js";

const f = useLoopd();
const client = () => api(f.loopd.app);

describe.each(["anthropic", "openai"] as const)("a turn %s refused", (provider) => {
  const blocked = provider === "anthropic" ? ("refusal" as const) : ("content_filter" as const);

  test("is kept in the history, marked, and left out of every later request: the next message gets a normal answer", async () => {
    const conv = await client().createConversation({ provider });
    f.llm.script({ text: "Fine." });
    await client().send(conv.id, { content: "Hello there." });
    f.llm.script({ text: "I can't help with that.", stop: blocked }, { text: "It is sunny in Lisbon." });
    const refused = (await client().send(conv.id, { content: "Something the provider refuses." })).json();
    expect(refused.run).toMatchObject({ status: "incomplete", stop_reason: blocked });

    const next = (await client().send(conv.id, { content: "What is the weather in Lisbon?" })).json();
    expect(next.run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
    expect(next.output_text).toBe("It is sunny in Lisbon.");
    // The request sent for it holds the earlier turn and the new question, not the refused turn.
    expect(userTextsIn(f.llm.requests.at(-1)!)).toEqual(["Hello there.", "What is the weather in Lisbon?"]);

    const history = await client().history(conv.id);
    expect(history.map((m) => [m.role, m.excluded ?? null])).toEqual([
      ["user", null],
      ["assistant", null],
      ["user", "refusal"],
      ["assistant", "refusal"],
      ["user", null],
      ["assistant", null],
    ]);
    // The provider-format history is what an SDK may be sent: without it too.
    const formatted = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=${provider}` })
    ).json();
    expect(JSON.stringify(formatted.messages)).not.toContain("Something the provider refuses.");
  });
});

test("the fake, like Anthropic, keeps refusing while a refused turn stays in the context", async () => {
  const conv = await client().createConversation({ provider: "anthropic" });
  f.llm.script({ text: "No.", stop: "refusal" }, { text: "Would be an answer." });
  await client().send(conv.id, { content: "Refused question." });
  // Sent again by hand, with the refused turn in it: refused again, and the scripted answer is left unused.
  const res = await fetch(`${f.llm.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: "claude-sonnet-4-6",
      max_tokens: 64,
      messages: [
        { role: "user", content: "Refused question." },
        { role: "assistant", content: "No." },
        { role: "user", content: "And now?" },
      ],
    }),
  });
  expect(((await res.json()) as { stop_reason: string }).stop_reason).toBe("refusal");
  expect(f.llm.pending()).toBe(1);
});
