import { Writable } from "node:stream";
import { expect, test } from "vitest";
import { createLogger } from "../../src/app.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { createTestDatabase } from "../support/helpers/test-database.js";
import { startFakeLlm } from "../support/fake-llm/server.js";

/** A loopd at `level` whose log lines are kept; runs one tool call and one request with credentials. */
async function logsOfARun(level: "info" | "debug"): Promise<string> {
  let text = "";
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const llm = await startFakeLlm();
  const testDb = await createTestDatabase();
  const database = await testDb.open();
  const loopd = await startLoopd({ database, llm, logger: createLogger(level, { destination, pretty: false }) });
  try {
    const conv = (
      await loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "anthropic" } })
    ).json();
    llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1234567*7654321" } }] }, { text: "Done." });
    const res = await loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/messages`,
      headers: {
        authorization: "Bearer fake-HEADER-SECRET",
        "x-api-key": "fake-XAPI-SECRET",
        cookie: "session=COOKIE-SECRET",
      },
      payload: { content: "My account number is ACCT-998877. What is 1234567*7654321?" },
    });
    expect(res.json().run.status).toBe("completed");
  } finally {
    await loopd.close();
    await database.close();
    await testDb.drop();
    await llm.close();
  }
  return text;
}

test("at info, logs carry neither what users wrote nor the arguments the model passed, nor any key", async () => {
  const logs = await logsOfARun("info");
  expect(logs).toContain('"msg":"tool call"'); // the line is there, without its arguments
  for (const secret of [
    "ACCT-998877",
    "1234567*7654321",
    "HEADER-SECRET",
    "XAPI-SECRET",
    "COOKIE-SECRET",
    "test-anthropic-key",
  ]) {
    expect(logs).not.toContain(secret);
  }
});

test("at debug, a tool call's arguments and a request's headers are logged, with credentials redacted", async () => {
  const logs = await logsOfARun("debug");
  expect(logs).toContain("1234567*7654321");
  expect(logs).toContain('"msg":"request headers"');
  expect(logs).toMatch(
    /"authorization":"\[redacted\]".*"x-api-key":"\[redacted\]"|"x-api-key":"\[redacted\]".*"authorization":"\[redacted\]"/,
  );
  for (const secret of ["HEADER-SECRET", "XAPI-SECRET", "COOKIE-SECRET", "test-anthropic-key"])
    expect(logs).not.toContain(secret);
});
