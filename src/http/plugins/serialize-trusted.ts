import type { FastifySerializerCompiler } from "fastify/types/schema.js";

/**
 * For routes that answer with rows this server wrote and its own presenters
 * shaped (a history of thousands of messages): plain `JSON.stringify`. The
 * route's schema still documents the answer; checking every outgoing row
 * against it again would cost more than reading the rows.
 */
export const serializeTrusted: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);
