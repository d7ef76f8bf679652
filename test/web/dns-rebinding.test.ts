/**
 * What a web page can make a browser do to a loopd with keys off, in a real
 * Chromium: a name rebound to 127.0.0.1 (`--host-resolver-rules` plays the
 * attacker's DNS) cannot read the API, and a foreign page's "simple"
 * requests (`mode: "no-cors"`, which CORS does not stop) change nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLogs } from "../support/helpers/log-sink.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { useBrowser } from "./browser.js";

const ATTACKER = "attacker.example";
const logs = captureLogs("info");
const f = useLoopd({ listen: true, logger: logs.logger });
const browser = useBrowser({ args: [`--host-resolver-rules=MAP ${ATTACKER} 127.0.0.1`] });

/** The attacker's own site: any page will do, what matters is its origin. */
let site: Server;
beforeAll(async () => {
  site = createServer((_req, res) =>
    res
      .writeHead(200, { "content-type": "text/html" })
      .end("<!doctype html><title>elsewhere</title><p>nothing to see</p>"),
  );
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

const loopdPort = () => new URL(f.loopd.url).port;

/** The status loopd answered each request to `path` with since log line `from`, from its own log lines. */
function answeredTo(path: string, from: number): number[] {
  const lines = logs.lines.slice(from);
  const ids = new Set(lines.filter((l) => l.msg === "incoming request" && l.req?.url === path).map((l) => l.reqId));
  return lines.filter((l) => l.msg === "request completed" && ids.has(l.reqId)).map((l) => l.res.statusCode as number);
}

test("a name rebound to loopd's address: the page loads as 421 and cannot read the API from it", async () => {
  const page = await browser.page();
  const visit = await page.goto(`http://${ATTACKER}:${loopdPort()}/`);
  expect(visit?.status()).toBe(421);
  // Same-origin now, for the browser: it would read whatever loopd answered.
  const read = await page.evaluate(async () => {
    const res = await fetch("/conversations");
    return { status: res.status, body: (await res.json()) as { error: { code: string } } };
  });
  expect(read.status).toBe(421);
  expect(read.body.error.code).toBe("misdirected_request");
  expect(JSON.stringify(read.body)).not.toContain('"data"');
});

test("a foreign page's no-cors requests (create, answer a pause, cancel) are refused with 403 and change nothing", async () => {
  const conversation = (
    await f.loopd.app.inject({
      method: "POST",
      url: "/conversations",
      payload: { provider: "anthropic", approval_required: ["calculate"] },
    })
  ).json().id as string;
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
  const run = (
    await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conversation}/messages`,
      payload: { content: "6*7?" },
    })
  ).json().run;
  expect(run.status).toBe("requires_action");
  const before = await rowCounts(f.database);

  const page = await browser.page();
  await page.goto(`http://${ATTACKER}:${(site.address() as AddressInfo).port}/`);
  const loopd = f.loopd.url;
  const paths = {
    create: "/conversations",
    answer: `/conversations/${conversation}/runs/${run.id}/actions`,
    cancel: `/conversations/${conversation}/runs/${run.id}/cancel`,
  };
  const callId = run.required_action.tool_calls[0].tool_call_id as string;
  const from = logs.lines.length;
  // What a page can send without a preflight: POST with no body, or a text/plain one.
  const types = await page.evaluate(
    async ({ loopd, paths, callId }) => {
      const send = (path: string, body?: string) =>
        fetch(`${loopd}${path}`, {
          method: "POST",
          mode: "no-cors",
          ...(body !== undefined && { body, headers: { "content-type": "text/plain" } }),
        }).then((r) => r.type);
      return [
        await send(paths.create),
        await send(paths.create, JSON.stringify({ title: "planted" })),
        await send(paths.answer, JSON.stringify({ approvals: [{ tool_call_id: callId, approve: true }] })),
        await send(paths.cancel),
      ];
    },
    { loopd, paths, callId },
  );
  // The page learns nothing either way: its answers are opaque.
  expect(types).toEqual(["opaque", "opaque", "opaque", "opaque"]);
  // They did reach loopd, which refused each.
  expect(answeredTo(paths.create, from)).toEqual([403, 403]);
  expect(answeredTo(paths.answer, from)).toEqual([403]);
  expect(answeredTo(paths.cancel, from)).toEqual([403]);
  expect(await rowCounts(f.database)).toEqual(before);
  expect(
    (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversation}/runs/${run.id}` })).json().status,
  ).toBe("requires_action");
});
