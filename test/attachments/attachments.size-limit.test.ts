import { monitorEventLoopDelay } from "node:perf_hooks";
import { expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { noisePng } from "../support/helpers/test-images.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();
const LIMIT = 5 * 1024 * 1024;

test("a message with an image at MAX_ATTACHMENT_BYTES is checked and stored while other requests keep being answered", async () => {
  // Just under MAX_ATTACHMENT_BYTES.
  const image = noisePng(1300, 1340);
  expect(image.length).toBeLessThanOrEqual(LIMIT);
  expect(image.length).toBeGreaterThan(LIMIT - 64 * 1024);
  const conv = await api(f.loopd.app).createConversation({ provider: "mock" });
  const body = {
    content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: image.toString("base64") } }],
  };

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const sending = api(f.loopd.app).send(conv.id, body);
  // Health checks sent one after another while the big message is handled: each is answered.
  let answered = 0;
  let done = false;
  const sent = sending.finally(() => (done = true));
  while (!done || answered === 0) {
    const res = await f.loopd.app.inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    answered++;
    // Let the message's own work in between (an answer can come back without the event loop turning).
    await new Promise((resolve) => setImmediate(resolve));
  }
  const res = await sent;
  delay.disable();
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(res.json().messages[0].content[0]).toMatchObject({
    media_type: "image/png",
    bytes: image.length,
    width: 1300,
    height: 1340,
  });
  const stored = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${conv.id}/attachments/${res.json().messages[0].content[0].attachment_id}`,
  });
  expect(stored.rawPayload.equals(image)).toBe(true);
  // The figure for the record (not asserted: timings depend on the machine).
  console.info(
    `event loop while a ${image.length}-byte image was sent: max delay ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms; ${answered} health checks answered meanwhile`,
  );
});
