/** The per-key limit counts and labels every keyed answer, those refused by validation included: it is checked before the body is read. */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", RATE_LIMIT_PER_MIN: "3" } });

test("requests that fail validation carry x-ratelimit-* and count: the 4th request in a minute is a 429 whatever its body", async () => {
  const key = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  const headers = { authorization: `Bearer ${key}` };
  const bad = () =>
    f.loopd.app.inject({
      method: "POST",
      url: "/conversations",
      payload: { provider: 42, pad: "x".repeat(500_000) },
      headers,
    });
  const answers = [await bad(), await bad(), await bad(), await bad(), await bad()];
  expect(answers.map((a) => [a.statusCode, a.headers["x-ratelimit-limit"]])).toEqual([
    [400, "3"],
    [400, "3"],
    [400, "3"],
    [429, "3"],
    [429, "3"],
  ]);
  expect(answers.map((a) => a.statusCode)).toEqual([400, 400, 400, 429, 429]);
});
