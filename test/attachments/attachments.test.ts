import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { expectError } from "../support/helpers/expect-error.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { b64, exe, jpeg, pdf, png, svg } from "../support/helpers/test-images.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();
const client = () => api(f.loopd.app);

const PNG = png(64, 64);
const PDF = pdf("Quarterly report");
const NOTES = "Meeting notes: ship on Friday.";
const URL_IMAGE = "https://example.com/cat.png";
const BLOCKS = [
  { type: "text", text: "What do you see?" },
  { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } },
  { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64(PDF) }, title: "report.pdf" },
  {
    type: "document",
    source: { type: "base64", media_type: "text/plain", data: b64(Buffer.from(NOTES)) },
    title: "notes",
  },
  { type: "image", source: { type: "url", url: URL_IMAGE } },
];

/** The user turn the provider is sent for BLOCKS, in its own shape. */
const expectedUserTurn = {
  anthropic: {
    role: "user",
    content: [
      { type: "text", text: "What do you see?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: b64(PDF) },
        title: "report.pdf",
      },
      { type: "document", source: { type: "text", media_type: "text/plain", data: NOTES }, title: "notes" },
      { type: "image", source: { type: "url", url: URL_IMAGE } },
    ],
  },
  openai: {
    role: "user",
    content: [
      { type: "text", text: "What do you see?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${b64(PDF)}` } },
      { type: "text", text: `notes\n\n${NOTES}` },
      { type: "image_url", image_url: { url: URL_IMAGE } },
    ],
  },
};

/** The first user turn of a request body, without the cache breakpoint Anthropic's last block may carry. */
const userTurnOf = (body: { messages: unknown[] }): unknown =>
  JSON.parse(JSON.stringify(body.messages.find((m) => (m as { role: string }).role === "user")), (k, v: unknown) =>
    k === "cache_control" ? undefined : v,
  );

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("the exact bytes reach the model, each in the provider's shape; the saved message refers to the attachments", async () => {
    const conv = await client().createConversation({ provider });
    f.llm.script({ text: "A gradient, a report and notes." });
    const res = await client().send(conv.id, { content: BLOCKS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().run.status).toBe("completed");
    expect(f.llm.requests).toHaveLength(1);
    expect(userTurnOf(f.llm.requests[0]!.body)).toEqual(expectedUserTurn[provider]);

    const [user] = res.json().messages;
    expect(user.content).toEqual([
      BLOCKS[0],
      {
        type: "image",
        attachment_id: expect.stringMatching(/^att_/),
        media_type: "image/png",
        bytes: PNG.length,
        width: 64,
        height: 64,
      },
      {
        type: "document",
        attachment_id: expect.stringMatching(/^att_/),
        media_type: "application/pdf",
        bytes: PDF.length,
        title: "report.pdf",
      },
      {
        type: "document",
        attachment_id: expect.stringMatching(/^att_/),
        media_type: "text/plain",
        bytes: NOTES.length,
        title: "notes",
      },
      BLOCKS[4],
    ]);
  });

  test("a later step and a later run send the same bytes again; ?format= and /context show them", async () => {
    const conv = await client().createConversation({ provider, tools: ["calculate"] });
    f.llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
      { text: "42." },
      { text: "Still a gradient." },
    );
    expect((await client().send(conv.id, { content: BLOCKS })).json().run.status).toBe("completed");
    expect((await client().send(conv.id, { content: "And now?" })).json().run.status).toBe("completed");
    expect(f.llm.requests).toHaveLength(3);
    for (const req of f.llm.requests) expect(userTurnOf(req.body)).toEqual(expectedUserTurn[provider]);

    const history = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/messages?format=${provider}`,
    });
    expect(history.statusCode).toBe(200);
    expect(userTurnOf(history.json())).toEqual(expectedUserTurn[provider]);
    const context = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/context?format=${provider}`,
    });
    expect(context.statusCode).toBe(200);
    expect(userTurnOf(context.json().request)).toEqual(expectedUserTurn[provider]);
  });
});

describe("stored attachments", () => {
  test("the same bytes sent twice are one row with one id; the route answers them with their type, as a download", async () => {
    const conv = await client().createConversation({ provider: "mock" });
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } };
    const before = await rowCounts(f.database);
    const first = (await client().send(conv.id, { content: [image] })).json().messages[0].content[0];
    const second = (await client().send(conv.id, { content: [{ type: "text", text: "again" }, image] })).json()
      .messages[0].content[1];
    expect(second.attachment_id).toBe(first.attachment_id);
    expect((await rowCounts(f.database)).attachments).toBe(before.attachments + 1);

    const res = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/attachments/${first.attachment_id}`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("image/png");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-disposition"]).toMatch(/^attachment;/);
    expect(res.rawPayload.equals(PNG)).toBe(true);

    // Another conversation's id for it, or an unknown id: the same 404.
    const other = await client().createConversation({ provider: "mock" });
    const elsewhere = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${other.id}/attachments/${first.attachment_id}`,
    });
    const unknown = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/attachments/att_0mx0000000000000000000000`,
    });
    expectError(elsewhere, 404, "not_found");
    expectError(unknown, 404, "not_found");
  });

  test("the mock says what it was shown", async () => {
    const conv = await client().createConversation({ provider: "mock" });
    const res = await client().send(conv.id, {
      content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } }],
    });
    expect(res.json().output_text).toMatch(/^You showed me an image\/png of 64×64 pixels\. /);
  });

  test("deleting the conversation deletes its attachments", async () => {
    const conv = await client().createConversation({ provider: "mock" });
    const before = await rowCounts(f.database);
    await client().send(conv.id, {
      content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: b64(jpeg()) } }],
    });
    expect((await rowCounts(f.database)).attachments).toBe(before.attachments + 1);
    expect((await f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` })).statusCode).toBe(204);
    expect((await rowCounts(f.database)).attachments).toBe(before.attachments);
  });
});

const image = (media_type: string, data: string) => ({ type: "image", source: { type: "base64", media_type, data } });
const doc = (media_type: string, data: string) => ({ type: "document", source: { type: "base64", media_type, data } });

describe("bad attachments: a 400 naming the block, nothing saved", () => {
  const tooMany = Array.from({ length: 11 }, (_, i) => image("image/png", b64(png(4, 4, i))));
  test.each([
    ["bytes that are not what media_type says", [image("image/png", b64(jpeg()))], 1],
    ["a truncated PNG", [image("image/png", b64(PNG.subarray(0, PNG.length - 20)))], 1],
    ["a 0-byte file", [image("image/png", "")], 1],
    ["an SVG declared as an image", [image("image/webp", b64(svg()))], 1],
    ["an executable declared as an image", [image("image/jpeg", b64(exe()))], 1],
    ["a PDF over the limit", [doc("application/pdf", b64(Buffer.concat([PDF, Buffer.alloc(5 * 1024 * 1024, 32)])))], 1],
    ["too many blocks", tooMany, 10],
    ["base64 that is not base64", [image("image/png", `${b64(PNG).slice(0, 40)}*${b64(PNG).slice(41)}`)], 1],
    ["a URL that is not http(s)", [{ type: "image", source: { type: "url", url: "javascript:alert(1)" } }], 1],
  ])("%s", async (_name, blocks, index) => {
    const conv = await client().createConversation({ provider: "mock" });
    const before = await rowCounts(f.database);
    // (Too many: eleven good images, the last named.)
    const content = index === 10 ? blocks : [{ type: "text", text: "look" }, ...blocks];
    const res = await client().send(conv.id, { content });
    const error = expectError(res, 400, "invalid_request");
    expect(error.details.field).toBe(`body.content[${index}]`);
    expect(error.message).toMatch(new RegExp(`^body\\.content\\[${index}\\]: `));
    expect(await rowCounts(f.database)).toEqual(before);
  });
});
