import type { FakeTurn } from "./fake-turn.js";
import { startFakeLlm } from "./server.js";

/**
 * Run the fake LLM as its own process, for tests that start loopd as a child:
 *
 *   PORT=0 FAKE_LLM_SCRIPT='[{"text":"hi"}]' tsx test/support/fake-llm/main.ts
 *
 * Prints `FAKE_LLM_URL=<url>` once listening. Drive it over HTTP with
 * `POST /_script` (a JSON array of turns), `GET /_requests`, `GET /_pending`
 * and `POST /_reset`. FAKE_LLM_CHUNK_DELAY_MS sets the default chunk delay.
 */

const script = process.env.FAKE_LLM_SCRIPT ? (JSON.parse(process.env.FAKE_LLM_SCRIPT) as FakeTurn[]) : [];
const llm = await startFakeLlm({
  port: Number(process.env.PORT ?? 0),
  chunkDelayMs: Number(process.env.FAKE_LLM_CHUNK_DELAY_MS ?? 0),
});
llm.script(...script);
process.stdout.write(`FAKE_LLM_URL=${llm.url}\n`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void llm.close().then(() => process.exit(0));
  });
}
