import { describe, expect, test } from "vitest";
import { anthropicMediaProblem, openAIPartProblem } from "./validate-media.js";
import { validateAnthropicRequest } from "./validate-anthropic-history.js";
import { b64, jpeg, pdf, png } from "../helpers/test-images.js";

describe("the fake LLM checks images and documents as the real APIs do", () => {
  test("Anthropic: base64 that decodes to the declared type passes; anything else is a problem", () => {
    const block = (media_type: string, data: string) => ({
      type: "image",
      source: { type: "base64", media_type, data },
    });
    expect(anthropicMediaProblem(block("image/png", b64(png())), "m")).toBeNull();
    expect(
      anthropicMediaProblem(
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64(pdf()) } },
        "m",
      ),
    ).toBeNull();
    expect(anthropicMediaProblem(block("image/png", b64(jpeg())), "m")).toMatch(/does not appear to be one/);
    expect(anthropicMediaProblem(block("image/png", "not base64!"), "m")).toMatch(/invalid base64/);
    expect(anthropicMediaProblem(block("image/svg+xml", b64(png())), "m")).toMatch(/unsupported media type/);
  });

  test("Anthropic: a tool_result's content may hold text and images, the images' bytes checked; no other block, no empty text", () => {
    const request = (content: unknown) => ({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] },
      ],
    });
    const image = (media_type: string, data: string) => ({
      type: "image",
      source: { type: "base64", media_type, data },
    });
    expect(
      validateAnthropicRequest(request([{ type: "text", text: "a chart" }, image("image/png", b64(png()))])),
    ).toBeNull();
    expect(validateAnthropicRequest(request("plain"))).toBeNull();
    expect(validateAnthropicRequest(request([image("image/png", b64(jpeg()))]))).toMatch(
      /^messages\.2\.content\.0\.content\.0\.source\.base64: .*does not appear to be one/,
    );
    expect(validateAnthropicRequest(request([image("image/png", "%%%")]))).toMatch(/invalid base64/);
    expect(validateAnthropicRequest(request([{ type: "tool_use", id: "x", name: "t", input: {} }]))).toMatch(
      /does not match any of the expected tags/,
    );
    expect(validateAnthropicRequest(request([{ type: "text", text: " " }]))).toMatch(/non-whitespace/);
  });

  test("OpenAI: data URLs are decoded and checked; http(s) URLs pass", () => {
    expect(
      openAIPartProblem({ type: "image_url", image_url: { url: `data:image/png;base64,${b64(png())}` } }, "p"),
    ).toBeNull();
    expect(openAIPartProblem({ type: "image_url", image_url: { url: "https://example.com/a.png" } }, "p")).toBeNull();
    expect(
      openAIPartProblem({ type: "image_url", image_url: { url: `data:image/gif;base64,${b64(png())}` } }, "p"),
    ).toMatch(/does not appear/);
    expect(
      openAIPartProblem(
        { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,%%%" } },
        "p",
      ),
    ).toMatch(/invalid base64/);
  });
});
