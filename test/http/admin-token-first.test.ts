/** The admin routes refuse anyone without ADMIN_TOKEN with 401 before they read the body or the query. */
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", ADMIN_TOKEN: "admin-token-0123456789abcdef" } });

test("a tenant key (or none) with a bad body or query gets 401, not the admin routes' 400", async () => {
  const key = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  const withKey = { authorization: `Bearer ${key}` };
  const answers = [
    await f.loopd.app.inject({ method: "POST", url: "/admin/keys", payload: {}, headers: withKey }),
    await f.loopd.app.inject({ method: "POST", url: "/admin/keys", payload: { tenant: "!" } }),
    await f.loopd.app.inject({ method: "GET", url: "/admin/keys?tenant=%21", headers: withKey }),
    await f.loopd.app.inject({ method: "DELETE", url: `/admin/keys/${"k".repeat(101)}`, headers: withKey }),
  ];
  expect(answers.map((a) => [a.statusCode, a.json().error.code])).toEqual(Array(4).fill([401, "unauthorized"]));
});
