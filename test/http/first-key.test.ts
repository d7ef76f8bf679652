/** With keys required and none made yet (a container's first start), loopd makes one and prints it once. */
import { expect, test } from "vitest";
import { captureLogs } from "../support/helpers/log-sink.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const logs = captureLogs("warn");
const f = useLoopd({ env: { API_KEYS_REQUIRED: "true" }, logger: logs.logger });

test("the first start makes a key for tenant default and logs it once; it works, and its last use is kept; a restart makes none", async () => {
  const said = logs.lines.filter((l) => /shown this once/.test(l.msg));
  expect(said).toHaveLength(1);
  const key = /(lpd_[A-Za-z0-9_-]{43})/.exec(said[0].msg)![1]!;
  expect(said[0]).toMatchObject({ tenant: "default", key_id: expect.stringMatching(/^key_/) });
  const ok = await f.loopd.app.inject({
    method: "GET",
    url: "/conversations",
    headers: { authorization: `Bearer ${key}` },
  });
  expect(ok.statusCode).toBe(200);
  expect((await f.loopd.app.inject({ method: "GET", url: "/conversations" })).statusCode).toBe(401);
  await f.restart();
  expect(logs.lines.filter((l) => /shown this once/.test(l.msg))).toHaveLength(1);
  const [row] = await f.loopd.services.store.keys.list();
  expect(await f.loopd.services.store.keys.list()).toHaveLength(1);
  // Its use was written when the first loopd stopped (uses are written once a minute, and at the end).
  expect(row!.lastUsedAt).toBeInstanceOf(Date);
});
