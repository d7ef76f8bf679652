import { Writable } from "node:stream";
import { afterEach, expect, test } from "vitest";
import { createLogger } from "../../src/app.js";

const isTTY = process.stdout.isTTY;
afterEach(() => {
  process.stdout.isTTY = isTTY;
});

/** A destination that keeps what is written. */
function sink() {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test("at a terminal the logs are pretty lines, secrets still redacted", async () => {
  process.stdout.isTTY = true;
  const out = sink();
  createLogger("info", { destination: out.stream }).info(
    { req: { headers: { authorization: "Bearer fake-secret" } } },
    "loopd is ready",
  );
  await settle();
  expect(out.text()).toMatch(/INFO.*loopd is ready/);
  expect(() => JSON.parse(out.text().split("\n")[0]!)).toThrow();
  expect(out.text()).not.toContain("fake-secret");
});

test("anywhere else they are JSON lines", async () => {
  process.stdout.isTTY = false;
  const out = sink();
  createLogger("info", { destination: out.stream }).info({ port: 3000 }, "loopd is ready");
  await settle();
  expect(JSON.parse(out.text().trim())).toMatchObject({ level: 30, msg: "loopd is ready", port: 3000 });
});
