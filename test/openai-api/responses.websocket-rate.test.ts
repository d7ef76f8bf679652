/**
 * WebSocket mode of `/v1/responses` and the key's `RATE_LIMIT_PER_MIN`: each
 * `response.create` counts as a request would, so one upgrade does not run
 * responses past the limit.
 */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { openResponseSocket } from "../support/helpers/response-socket.js";

const f = useLoopd({
  listen: true,
  env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true", RATE_LIMIT_PER_MIN: "3" },
});

test("the upgrade and each response.create count in the key's window: past it, 429 rate_limited, nothing run, the socket goes on", async () => {
  const { key } = await f.loopd.services.store.keys.create({ tenant: "acme", name: null });
  const ws = await openResponseSocket(f.loopd.url, key);
  const model = "openai/gpt-4o-mini";
  for (const text of ["One.", "Two."]) {
    f.llm.script({ text });
    expect((await ws.create({ model, store: false, input: "Hi" })).at(-1)?.type).toBe("response.completed");
  }
  const refused = await ws.create({ model, store: false, input: "Hi" });
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ type: "error", status: 429, error: { code: "rate_limited" } });
  expect(f.llm.requests).toHaveLength(2);
  // Counted in the same window as requests: a POST is refused too.
  const post = await fetch(`${f.loopd.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, input: "Hi" }),
  });
  expect(post.status).toBe(429);
  expect(ws.socket.readyState).toBe(ws.socket.OPEN);
  ws.socket.close();
  await ws.closed;
});
