/** /usage: a day JavaScript accepts but Postgres does not (year 0) is a 400 that says why, not a 500. */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true" } });

test("from=0000-01-01 is a 400, not a 500", async () => {
  const a = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  const r = await f.loopd.app.inject({
    method: "GET",
    url: "/usage?from=0000-01-01&to=0000-01-02",
    headers: { authorization: `Bearer ${a}` },
  });
  expect(r.statusCode, r.body).toBe(400);
});
