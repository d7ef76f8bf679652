import { STATUS_CODES, maxHeaderSize } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { errorBody, statusOf, type ErrorCode } from "../../errors.js";

/**
 * Node's HTTP parser refuses some requests before Fastify sees them: headers
 * over `maxHeaderSize`, a request line or header that is not HTTP, a request
 * that did not arrive in time. They too get the contract's error body; the
 * connection is then closed, as its framing can no longer be trusted.
 */
export function createClientErrorHandler(log: FastifyBaseLogger) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    // The client is gone: nothing to answer.
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    const { code, message } = describe(err.code);
    log.debug({ err: { code: err.code, message: err.message } }, "malformed request refused");
    if (socket.writable) {
      const status = statusOf(code);
      const body = JSON.stringify(errorBody(code, message, { reason: err.code ?? "bad_request" }));
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}

function describe(nodeCode: string | undefined): { code: ErrorCode; message: string } {
  switch (nodeCode) {
    case "HPE_HEADER_OVERFLOW":
      return {
        code: "headers_too_large",
        message: `the request line and headers are larger than the ${maxHeaderSize} bytes the server accepts`,
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { code: "request_timeout", message: "the request did not arrive in time" };
    default:
      return { code: "invalid_request", message: "the request is not valid HTTP/1.1" };
  }
}
