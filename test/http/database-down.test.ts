import { expect, test } from "vitest";
import { useLoopd } from "../helpers/use-loopd.js";

const f = useLoopd();

test("with the database gone, healthz and the API answer 503 unavailable without internals", async () => {
  const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations" })).json();
  expect((await f.loopd.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);

  await f.database.close();

  const health = await f.loopd.app.inject({ method: "GET", url: "/healthz" });
  expect(health.statusCode).toBe(503);
  expect(health.json().error.code).toBe("unavailable");
  for (const res of [
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` }),
    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/messages`, payload: { content: "hi" } }),
  ]) {
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: { code: "unavailable", message: expect.any(String), details: {} } });
  }
});
