import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

let maxStepsLimit = "50";
const f = useLoopd(() => ({ env: { MAX_STEPS_LIMIT: maxStepsLimit } }));

test("an identical retry is recognised after the server's limits change: the key covers the request as sent", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "mock" } })
  ).json();
  const send = () =>
    f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/messages`,
      headers: { "idempotency-key": "retry-after-redeploy" },
      payload: { content: "Hello", max_steps: 30 },
    });
  const first = await send();
  expect(first.statusCode).toBe(200);

  // The operator lowers the limit and restarts; the client retries the same request.
  maxStepsLimit = "20";
  await f.restart();
  const retry = await send();
  expect(retry.statusCode).toBe(200);
  expect(retry.headers["idempotent-replayed"]).toBe("true");
  expect(retry.json().run.id).toBe(first.json().run.id);
});
