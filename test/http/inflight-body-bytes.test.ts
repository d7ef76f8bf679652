/**
 * Bodies being received at once are bounded in bytes, per key and in all
 * (MAX_INFLIGHT_BODY_BYTES, MAX_INFLIGHT_BODY_BYTES_PER_KEY): stalled uploads
 * cannot pin the process's memory nor shut other tenants out. The bounds are
 * set small here, with a body allowance to match (a message may attach one
 * 1 MiB file, so its body may have about 1.4 MB).
 */
import { beforeAll, expect, test, vi } from "vitest";
import { startUpload, type SlowUpload } from "../support/helpers/slow-upload.js";
import { b64, noisePng } from "../support/helpers/test-images.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const TOTAL = 4 * 1024 * 1024;
const PER_KEY = 1.5 * 1024 * 1024;
const UPLOAD = 1_400_000;
const f = useLoopd({
  listen: true,
  env: {
    API_KEYS_REQUIRED: "true",
    MOCK_PROVIDER: "true",
    RATE_LIMIT_PER_MIN: "0",
    BODY_LIMIT_BYTES: "65536",
    MAX_ATTACHMENT_BYTES: "1048576",
    MAX_ATTACHMENTS_PER_MESSAGE: "1",
    MAX_INFLIGHT_BODY_BYTES: String(TOTAL),
    MAX_INFLIGHT_BODY_BYTES_PER_KEY: String(PER_KEY),
  },
});

const keys: Record<string, string> = {};
const keyIds: Record<string, string> = {};
const conversations: Record<string, string> = {};
beforeAll(async () => {
  for (const name of ["a", "b", "c", "d"]) {
    const created = await f.loopd.services.store.keys.create({ tenant: `tenant-${name}`, name: null });
    keys[name] = created.key;
    keyIds[name] = created.row.id;
    const res = await fetch(`${f.loopd.url}/conversations`, {
      method: "POST",
      headers: headersOf(name),
      body: JSON.stringify({ provider: "mock" }),
    });
    conversations[name] = ((await res.json()) as { id: string }).id;
  }
});

const headersOf = (name: string) => ({ authorization: `Bearer ${keys[name]}`, "content-type": "application/json" });
/** An upload of `name`'s message that declares UPLOAD bytes and sends a few. */
function stalledUpload(
  name: string,
  headers: Record<string, string | number> = { "Content-Length": UPLOAD },
): SlowUpload {
  const upload = startUpload(f.loopd.url, {
    path: `/conversations/${conversations[name]}/messages`,
    headers: { Authorization: `Bearer ${keys[name]}`, ...headers },
  });
  upload.socket.write(headers["Transfer-Encoding"] ? "" : '{"content": [');
  return upload;
}
const held = () => f.loopd.app.inflightBodies.total;

async function expectRefused(upload: SlowUpload, scope: "key" | "all") {
  const { status, text, body } = await upload.closed;
  expect(status, text.slice(0, 300)).toBe(503);
  expect(text).toMatch(/\r\nretry-after: \d+\r\n/i);
  expect(text).toMatch(/\r\nconnection: close\r\n/i);
  expect(JSON.parse(body)).toMatchObject({
    error: { code: "unavailable", details: { reason: "inflight_body_bytes", scope } },
  });
}

test("one key's 8 stalled uploads: the first is held, the others get 503 with Retry-After, and other keys are served; once they close, uploads are taken again", async () => {
  const first = stalledUpload("a");
  await vi.waitFor(() => expect(held()).toBe(UPLOAD));
  const more = Array.from({ length: 7 }, () => stalledUpload("a"));
  for (const upload of more) await expectRefused(upload, "key");
  expect(first.answered()).toBe(false);
  expect(held()).toBe(UPLOAD);

  // Another key: its own upload and a small request are served.
  const other = await fetch(`${f.loopd.url}/conversations`, {
    method: "POST",
    headers: headersOf("b"),
    body: JSON.stringify({ title: "still served" }),
  });
  expect(other.status).toBe(201);

  // Bodies of several keys fill the bound of all: then any key's upload waits its turn, a small body still fits.
  const second = stalledUpload("b");
  await vi.waitFor(() => expect(held()).toBe(2 * UPLOAD));
  await expectRefused(stalledUpload("c"), "all");
  const small = await fetch(`${f.loopd.url}/conversations`, {
    method: "POST",
    headers: headersOf("d"),
    body: JSON.stringify({ title: "small" }),
  });
  expect(small.status).toBe(201);
  const read = await fetch(`${f.loopd.url}/conversations`, { headers: headersOf("c") });
  expect(read.status).toBe(200);

  // A chunked body has no length: it is counted as it arrives, and refused once it would pass its key's share.
  const chunked = stalledUpload("a", { "Transfer-Encoding": "chunked" });
  const piece = Buffer.alloc(256 * 1024, 0x20);
  chunked.socket.write(`${piece.length.toString(16)}\r\n`);
  chunked.socket.write(piece);
  chunked.socket.write("\r\n");
  await expectRefused(chunked, "key");

  first.socket.destroy();
  second.socket.destroy();
  await Promise.all([first.closed, second.closed]);
  await vi.waitFor(() => expect(held()).toBe(0));
  expect(f.loopd.app.inflightBodies.of(keyIds.a!)).toBe(0);

  // Taken again: key a's message with a 1 MB image is received whole and answered.
  const image = noisePng(560, 600);
  const res = await fetch(`${f.loopd.url}/conversations/${conversations.a}/messages`, {
    method: "POST",
    headers: headersOf("a"),
    body: JSON.stringify({
      content: [
        { type: "text", text: "What is it?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: b64(image) } },
      ],
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(held()).toBe(0);
});

test("a body that ends early, and one refused for its size, leave nothing held", async () => {
  const aborted = stalledUpload("c");
  await vi.waitFor(() => expect(held()).toBe(UPLOAD));
  aborted.socket.end();
  await aborted.closed;
  await vi.waitFor(() => expect(held()).toBe(0));

  const tooBig = startUpload(f.loopd.url, {
    path: `/conversations/${conversations.c}/messages`,
    headers: { Authorization: `Bearer ${keys.c}`, "Content-Length": 10_000_000 },
  });
  expect((await tooBig.closed).status).toBe(413);
  expect(held()).toBe(0);
});
