import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();

test("with the database gone, /readyz and the API answer 503 unavailable without internals; /healthz, which asks no database, 200", async () => {
  const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations" })).json();
  expect((await f.loopd.app.inject({ method: "GET", url: "/readyz" })).json()).toEqual({ status: "ready" });

  await f.database.close();

  expect((await f.loopd.app.inject({ method: "GET", url: "/healthz" })).json()).toEqual({ status: "ok" });
  const ready = await f.loopd.app.inject({ method: "GET", url: "/readyz" });
  expect(ready.statusCode).toBe(503);
  expect(ready.json().error).toMatchObject({ code: "unavailable", details: { reason: "database" } });
  for (const res of [
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` }),
    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/messages`, payload: { content: "hi" } }),
  ]) {
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: { code: "unavailable", message: expect.any(String), details: {} } });
  }
});
