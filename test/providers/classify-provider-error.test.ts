import { describe, expect, test } from "vitest";
import { classifyProviderError } from "../../src/providers/shared/classify-provider-error.js";

const classify = (status: number | null, message = "something went wrong", type: string | null = null) =>
  classifyProviderError({ status, type, message });

describe("classifyProviderError", () => {
  test("no response is worth another attempt, unless the type says the request is at fault", () => {
    expect(classify(null, "socket hang up")).toBe("retryable");
    expect(classify(null, "Overloaded", "overloaded_error")).toBe("retryable");
    expect(classify(null, "bad request", "invalid_request_error")).toBe("fatal");
    expect(classify(null, "bad key", "authentication_error")).toBe("fatal");
  });

  test.each([408, 409, 429, 500, 502, 503, 504, 529])("%i is retryable", (status) => {
    expect(classify(status)).toBe("retryable");
  });

  test("a 429 about a used-up quota is a capacity error: another model, not another wait", () => {
    expect(classify(429, "You exceeded your current quota, please check your plan")).toBe("capacity");
    expect(classify(429, "rate limited", "insufficient_quota")).toBe("capacity");
    expect(classify(429, "Rate limit reached for requests", "rate_limit_exceeded")).toBe("retryable");
  });

  test.each([400, 401, 403, 404, 422])("%i is fatal", (status) => {
    expect(classify(status, "nope")).toBe("fatal");
  });

  test("a request too large for the model's context window is a context-window error", () => {
    expect(classify(413, "Request Entity Too Large")).toBe("context_window");
    expect(classify(400, "prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error")).toBe(
      "context_window",
    );
    expect(classify(400, "This model's maximum context length is 128000 tokens.", "context_length_exceeded")).toBe(
      "context_window",
    );
    expect(classify(422, "too many input tokens")).toBe("context_window");
  });

  test("a context-window word on a status other than 400/413/422 decides nothing", () => {
    expect(classify(503, "maximum context length")).toBe("retryable");
    expect(classify(401, "context window")).toBe("fatal");
  });
});
