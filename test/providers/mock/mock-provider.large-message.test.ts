import { expect, test } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

// Room for a 1 MiB message in its JSON wrapper.
const f = useLoopd({ env: { BODY_LIMIT_BYTES: String(4 * 1024 * 1024) } });

test("a 1 MiB message to the mock provider is answered without freezing the process", async () => {
  const client = api(f.loopd.app);
  const conv = await client.createConversation({ provider: "mock" });
  // Ordinary words, with a long run of spaces in them: the mock once read the
  // whole message with patterns that backtrack through such a run.
  const question = "What is 6*7?";
  const words = "lorem ipsum dolor sit amet ";
  const spaces = " ".repeat(32 * 1024);
  const filler = words.repeat(Math.ceil((1024 * 1024 - spaces.length - question.length) / words.length));
  const content = (filler + spaces).slice(0, 1024 * 1024 - question.length) + question;
  expect(content.length).toBe(1024 * 1024);

  // A small question first, so the bound measures the size of the message,
  // not the first request's compiling and warming up.
  expect((await client.send(conv.id, { content: "What is 1+1?" })).json().output_text).toBe("1+1 = 2");
  const started = performance.now();
  const res = await client.send(conv.id, { content });
  const elapsedMs = performance.now() - started;

  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ run: { status: "completed" }, output_text: "6*7 = 42" });
  // A freeze guard, not a measure of speed (bench/ measures): about 0.1 s alone, 1 s beside other test
  // files on two cores; the backtracking patterns this guards against took hours at this size.
  expect(elapsedMs).toBeLessThan(10_000);
});
