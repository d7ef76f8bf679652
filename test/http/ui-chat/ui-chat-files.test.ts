import { validateUIMessages, type FileUIPart, type UIMessage } from "ai";
import { describe, expect, test } from "vitest";
import { chatWith } from "../../support/helpers/headless-chat.js";
import { rowCounts } from "../../support/helpers/row-counts.js";
import { b64, jpeg, pdf, png, svg } from "../../support/helpers/test-images.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd({ listen: true });

const PNG = png(40, 30, 3);
const PDF = pdf("Invoice 42");
const URL_IMAGE = "https://example.com/photo.jpg";
/** File parts as `convertFileListToFileUIParts` makes them: data URLs. */
const file = (mediaType: string, bytes: Buffer, filename?: string): FileUIPart => ({
  type: "file",
  mediaType,
  url: `data:${mediaType};base64,${b64(bytes)}`,
  ...(filename && { filename }),
});

/** The user turn the provider got, without Anthropic's cache breakpoint. */
const userTurnOf = (body: { messages: unknown[] }): any =>
  JSON.parse(JSON.stringify(body.messages.findLast((m) => (m as { role: string }).role === "user")), (k, v: unknown) =>
    k === "cache_control" ? undefined : v,
  );

const expected = {
  anthropic: [
    { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } },
    {
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: b64(PDF) },
      title: "invoice.pdf",
    },
    { type: "image", source: { type: "url", url: URL_IMAGE } },
    { type: "text", text: "What are these?" },
  ],
  openai: [
    { type: "image_url", image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
    { type: "file", file: { filename: "invoice.pdf", file_data: `data:application/pdf;base64,${b64(PDF)}` } },
    { type: "image_url", image_url: { url: URL_IMAGE } },
    { type: "text", text: "What are these?" },
  ],
};

describe.each(["anthropic", "openai"] as const)("file parts through %s", (provider) => {
  const newChat = (id?: string) =>
    chatWith({ url: f.loopd.url, ...(id && { id }), body: { conversation: { provider } } });

  test("a message's files reach the model as their exact bytes; the history refers to the attachments; …/messages shows them as file parts the client can fetch", async () => {
    f.llm.script({ text: "A gradient, an invoice and a photo." });
    const chat = newChat();
    await chat.sendMessage({
      text: "What are these?",
      files: [
        file("image/png", PNG, "gradient.png"),
        file("application/pdf", PDF, "invoice.pdf"),
        { type: "file", mediaType: "image/jpeg", url: URL_IMAGE },
      ],
    });
    expect(chat.error).toBeUndefined();
    expect(f.llm.requests).toHaveLength(1);
    expect(userTurnOf(f.llm.requests[0]!.body).content).toEqual(expected[provider]);

    const conversation = (
      (await f.loopd.app.inject({ method: "GET", url: "/conversations?limit=100" })).json().data as {
        id: string;
        chat_id: string;
      }[]
    ).find((c) => c.chat_id === chat.id)!;
    const [user] = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversation.id}/messages` })
    ).json().data;
    expect(user.content).toEqual([
      {
        type: "image",
        attachment_id: expect.stringMatching(/^att_/),
        media_type: "image/png",
        bytes: PNG.length,
        width: 40,
        height: 30,
      },
      {
        type: "document",
        attachment_id: expect.stringMatching(/^att_/),
        media_type: "application/pdf",
        bytes: PDF.length,
        title: "invoice.pdf",
      },
      { type: "image", source: { type: "url", url: URL_IMAGE } },
      { type: "text", text: "What are these?" },
    ]);

    const res = await f.loopd.app.inject({ method: "GET", url: `/ui/chat/${chat.id}/messages` });
    const seeded = await validateUIMessages<UIMessage>({ messages: res.json() });
    const attachmentUrl = (id: string) => `/conversations/${conversation.id}/attachments/${id}`;
    expect(seeded[0]!.parts).toEqual([
      { type: "file", mediaType: "image/png", url: attachmentUrl(user.content[0].attachment_id) },
      {
        type: "file",
        mediaType: "application/pdf",
        url: attachmentUrl(user.content[1].attachment_id),
        filename: "invoice.pdf",
      },
      { type: "file", mediaType: "image/jpeg", url: URL_IMAGE },
      { type: "text", text: "What are these?" },
    ]);
    // The url is loopd's own route, relative to its root: the client fetches it with its key.
    const image = await fetch(`${f.loopd.url}${(seeded[0]!.parts[0] as FileUIPart).url}`);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
  });

  test("a message of files alone starts a run; a text/plain file is a document titled by its name", async () => {
    f.llm.script({ text: "Notes about Friday." });
    const chat = newChat();
    await chat.sendMessage({ files: [file("text/plain", Buffer.from("Ship on Friday."), "notes.txt")] });
    expect(chat.error).toBeUndefined();
    expect(chat.messages.at(-1)!.parts.at(-1)).toMatchObject({ type: "text", text: "Notes about Friday." });
    const turn = userTurnOf(f.llm.requests[0]!.body);
    expect(turn.content).toEqual(
      provider === "anthropic"
        ? [
            {
              type: "document",
              source: { type: "text", media_type: "text/plain", data: "Ship on Friday." },
              title: "notes.txt",
            },
          ]
        : // (OpenAI's converter sends a lone text part as a string.)
          "notes.txt\n\nShip on Friday.",
    );
  });
});

describe("bad file parts: a 400 naming the part, nothing saved", () => {
  const post = (payload: unknown) =>
    f.loopd.app.inject({ method: "POST", url: "/ui/chat", payload: payload as object });
  const body = (id: string, parts: unknown[]) => ({
    id,
    messages: [
      { id: "u0", role: "user", parts: [{ type: "text", text: "earlier" }] },
      { id: "u1", role: "user", parts },
    ],
    trigger: "submit-message",
    conversation: { provider: "mock" },
  });
  const text = { type: "text", text: "look" };

  test.each([
    [
      "an SVG",
      { type: "file", mediaType: "image/svg+xml", url: `data:image/svg+xml;base64,${b64(svg())}` },
      /cannot be attached/,
    ],
    [
      "a media type loopd does not take",
      { type: "file", mediaType: "application/zip", url: "data:application/zip;base64,UEsDBA==" },
      /cannot be attached/,
    ],
    [
      "a data URL that is not base64",
      { type: "file", mediaType: "text/plain", url: "data:text/plain,hello" },
      /must be base64/,
    ],
    [
      "a URL that is not http(s)",
      { type: "file", mediaType: "image/png", url: "ftp://example.com/a.png" },
      /data: URL \(base64\) or an http\(s\) URL/,
    ],
    [
      "a PDF by its URL",
      { type: "file", mediaType: "application/pdf", url: "https://example.com/a.pdf" },
      /must be an image/,
    ],
    ["no url", { type: "file", mediaType: "image/png" }, /needs its url/],
    ["bytes that are not what the media type says", file("image/png", jpeg()), /is not image\/png/],
    ["a truncated PNG", file("image/png", PNG.subarray(0, PNG.length - 20)), /image\/png/],
  ])("%s", async (_what, part, message) => {
    for (const chatId of ["chat-bad-file", undefined]) {
      // A new chat (none is made), and a conversation that has one already (no message is added).
      let id = chatId;
      if (!id) {
        const conv = await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "mock" } });
        id = conv.json().id as string;
      }
      const before = await rowCounts(f.database);
      const res = await post(body(id, [text, part]));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({
        code: "invalid_request",
        details: { field: "body.messages[1].parts[1]" },
      });
      expect(res.json().error.message).toMatch(/^body\.messages\[1\]\.parts\[1\]: /);
      expect(res.json().error.message).toMatch(message);
      expect(await rowCounts(f.database)).toEqual(before);
    }
  });
});
