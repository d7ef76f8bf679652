/**
 * An MCP tool's images (the contract, "Images and documents"): kept as
 * attachments of the conversation, inside the tool result for Anthropic,
 * told in words to OpenAI, against the test MCP server over Streamable HTTP
 * on 127.0.0.1 (its `picture` tool answers the images it is given).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { api } from "../../support/helpers/api.js";
import { b64, jpeg, png, pngClaiming, svg } from "../../support/helpers/test-images.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";
import { rowCounts } from "../../support/helpers/row-counts.js";
import { startHttpMcpServer, type HttpMcpServer } from "../../support/mcp/http-mcp-server.js";

let mcp: HttpMcpServer;
beforeAll(async () => {
  mcp = await startHttpMcpServer();
});
afterAll(() => mcp.close());

const f = useLoopd(() => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "loopd-mcp-images-")), "tools.json");
  writeFileSync(file, JSON.stringify({ mcp: [{ name: "h", url: mcp.url }] }));
  return { env: { TOOLS_FILE: file } };
});
const client = () => api(f.loopd.app);

beforeAll(async () => {
  await vi.waitFor(
    async () =>
      expect((await f.loopd.app.inject({ method: "GET", url: "/tools/servers" })).json().data[0].status).toBe("ready"),
    { timeout: 20_000, interval: 50 },
  );
});

const PNG = png(16, 12, 5);
const picture = (images: { data: string; mimeType: string }[], text = "A chart.") => ({
  name: "h__picture",
  input: { text, images },
});
const withoutCache = (value: unknown): any =>
  JSON.parse(JSON.stringify(value), (k, v: unknown) => (k === "cache_control" ? undefined : v));
/** The first tool result of a request, as the provider got it. */
const toolResultOf = (body: { messages: any[] }, provider: "anthropic" | "openai") =>
  withoutCache(
    provider === "anthropic"
      ? body.messages
          .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
          .find((b: any) => b.type === "tool_result")
      : body.messages.find((m) => m.role === "tool"),
  );

async function runWith(provider: "anthropic" | "openai" | "mock", call: ReturnType<typeof picture>) {
  const conv = await client().createConversation({ provider, tools: ["h__picture"] });
  f.llm.script({ toolCalls: [call] }, { text: "I see a chart." });
  const res = await client().send(conv.id, { content: "Draw it." });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().run.status).toBe("completed");
  const result = (await client().history(conv.id)).find((m) => m.role === "tool")!.content[0];
  return { conv, run: res.json().run, result };
}

describe.each(["anthropic", "openai"] as const)("an MCP tool's image through %s", (provider) => {
  test("is kept as an attachment; the model gets it in the provider's shape, exact bytes and all, on this run's next call and the next run's; trace, ?format= and /context agree", async () => {
    const { conv, run, result } = await runWith(provider, picture([{ data: b64(PNG), mimeType: "image/png" }]));
    expect(result).toEqual({
      type: "tool_result",
      tool_call_id: expect.any(String),
      name: "h__picture",
      content: "A chart.",
      is_error: false,
      images: [
        {
          type: "image",
          attachment_id: expect.stringMatching(/^att_/),
          media_type: "image/png",
          bytes: PNG.length,
          width: 16,
          height: 12,
        },
      ],
    });
    const id = result.images[0].attachment_id as string;
    const served = await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/attachments/${id}` });
    expect(served.headers["content-type"]).toBe("image/png");
    expect(served.rawPayload.equals(PNG)).toBe(true);

    const expected =
      provider === "anthropic"
        ? {
            type: "tool_result",
            tool_use_id: result.tool_call_id,
            is_error: false,
            content: [
              { type: "text", text: "A chart." },
              { type: "image", source: { type: "base64", media_type: "image/png", data: b64(PNG) } },
            ],
          }
        : {
            role: "tool",
            tool_call_id: result.tool_call_id,
            content: `A chart.\n[an image/png of 16×12 pixels, attachment ${id}]`,
          };
    expect(f.llm.requests).toHaveLength(2);
    expect(toolResultOf(f.llm.requests[1]!.body, provider)).toEqual(expected);

    // The next run reads the bytes from the database.
    f.llm.reset();
    f.llm.script({ text: "Still a chart." });
    expect((await client().send(conv.id, { content: "And now?" })).json().run.status).toBe("completed");
    expect(toolResultOf(f.llm.requests[0]!.body, provider)).toEqual(expected);
    const format = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=${provider}` })
    ).json();
    expect(toolResultOf(format, provider)).toEqual(expected);
    const context = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/context?format=${provider}` })
    ).json();
    expect(toolResultOf(context.request, provider)).toEqual(expected);

    const trace = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}/trace?expand=requests` })
    ).json();
    const calls = trace.spans.filter((s: { type: string }) => s.type === "model.call");
    expect(calls.map((c: { request_verified: boolean }) => c.request_verified)).toEqual([true, true]);
    expect(toolResultOf(calls[1].request.body, provider)).toEqual(expected);
  });
});

describe("images that cannot be kept are told in the result's text; the run goes on", () => {
  test("bytes that are not what the type says, a type loopd does not keep, and those past the cap of one result", async () => {
    const before = await rowCounts(f.database);
    const good = Array.from({ length: 10 }, (_, i) => ({ data: b64(png(4, 4, i)), mimeType: "image/png" }));
    const { result } = await runWith(
      "anthropic",
      picture([
        { data: b64(jpeg()), mimeType: "image/png" },
        { data: b64(svg()), mimeType: "image/svg+xml" },
        ...good,
        good[0]!,
      ]),
    );
    expect(result.images).toHaveLength(10);
    expect(result.content.split("\n")).toEqual([
      "A chart.",
      expect.stringMatching(
        /^\[image image\/png, \d+ bytes: it could not be kept: it is not image\/png: its bytes are image\/jpeg\]$/,
      ),
      expect.stringMatching(
        /^\[image image\/svg\+xml, \d+ bytes: it could not be kept: image\/svg\+xml is not an image type loopd keeps/,
      ),
      expect.stringMatching(
        /: it could not be kept: a result may hold at most 10 images \(MAX_ATTACHMENTS_PER_MESSAGE\)\]$/,
      ),
    ]);
    expect((await rowCounts(f.database)).attachments).toBe(before.attachments + 10);
  });

  test("an image larger than a provider takes (20000×20000 px) is described, not passed on", async () => {
    const before = await rowCounts(f.database);
    const huge = pngClaiming(20_000, 20_000);
    const { result } = await runWith("anthropic", picture([{ data: b64(huge), mimeType: "image/png" }]));
    expect(result.images).toBeUndefined();
    expect(result.content.split("\n")).toEqual([
      "A chart.",
      `[image image/png, ${huge.length} bytes: it could not be kept: it is 20000×20000 pixels: an image may have at most 8000 px on a side and 50 megapixels]`,
    ]);
    // What the provider was sent for it: the words, no image.
    const sent = toolResultOf(f.llm.requests[1]!.body, "anthropic");
    expect(JSON.stringify(sent)).not.toContain(b64(huge));
    expect(JSON.stringify(sent)).toContain("20000×20000 pixels");
    expect((await rowCounts(f.database)).attachments).toBe(before.attachments);
  });

  test("the mock says what the tool showed it", async () => {
    const conv = await client().createConversation({ provider: "mock", tools: ["h__picture"] });
    const res = await client().send(conv.id, {
      content: `h__picture ${JSON.stringify({ text: "A chart.", images: [{ data: b64(PNG), mimeType: "image/png" }] })}`,
    });
    expect(res.json().run.status).toBe("completed");
    expect(res.json().output_text).toMatch(
      /^The h__picture tool returned: A chart\.\n\[an image\/png of 16×12 pixels, attachment att_\w+\]$/,
    );
  });
});
