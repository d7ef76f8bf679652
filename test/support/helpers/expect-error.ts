import { expect } from "vitest";

interface ResponseLike {
  statusCode: number;
  body: string;
  json(): any;
}

/** Asserts the contract's error body, `{"error":{"code","message","details"}}`, with no stack trace; returns `error`. */
export function expectError(res: ResponseLike, status: number, code: string) {
  expect({ status: res.statusCode, body: res.body.slice(0, 500) }).toMatchObject({ status });
  const body = res.json();
  expect(body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
  expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
  return body.error;
}
