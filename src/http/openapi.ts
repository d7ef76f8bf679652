import { z } from "zod";

/**
 * /openapi.json is generated from the routes' zod schemas. The route says
 * what it is (summary, operationId, tags) and describes its answers with
 * `documented`; the one thing zod cannot say, that an answer may be a stream
 * of server-sent events, is a mark on the schema that `describeRoute` (plugins/openapi-document.ts) turns
 * into the response's `text/event-stream` content.
 */

export const STREAM = "x-loopd-stream";
export type StreamMark = "json-or-events" | "events" | "text" | "ui" | "bytes";

/** A schema with what /openapi.json says of it: a description and examples, which the type checks against the schema. */
export function documented<T extends z.ZodType>(schema: T, description: string, ...examples: z.output<T>[]): T {
  return schema.meta({ description, ...(examples.length > 0 && { examples }) });
}

/**
 * A request body with named examples, which the type checks against what the
 * body accepts. They go in `x-examples`, which the generator makes the body's
 * `examples`: zod leaves `examples` out of the input schema of anything that
 * transforms (a conversation's `context` does).
 */
export function withExamples<T extends z.ZodType>(schema: T, examples: Record<string, z.input<T>>): T {
  return schema.meta({
    "x-examples": Object.fromEntries(
      Object.entries(examples).map(([summary, value], i) => [`example${i + 1}`, { summary, value }]),
    ),
  });
}

/** A 200 that is JSON, or the run's events when the request asked to stream (`"stream": true` or `Accept: text/event-stream`). */
export function jsonOrEventStream<T extends z.ZodType>(schema: T, description: string, example: z.output<T>): T {
  return schema.meta({ description, examples: [example], [STREAM]: "json-or-events" satisfies StreamMark });
}

/** A 200 that is only ever the run's events. The route writes them itself: no serializer sees this schema. */
export const eventStream = (description: string) =>
  z.string().meta({ description, [STREAM]: "events" satisfies StreamMark });

/** A 200 that is the AI SDK's UI message stream. The route writes it itself. */
export const uiMessageStream = (description: string) =>
  z.string().meta({ description, [STREAM]: "ui" satisfies StreamMark });

/** A 200 in plain text (Prometheus metrics). The route sends the text as it is: no serializer sees this schema. */
export const plainText = (description: string, example: string) =>
  z.string().meta({ description, examples: [example], [STREAM]: "text" satisfies StreamMark });

/** A 200 of bytes (an attachment) in their own content types. The route sends the bytes as they are: no serializer sees this schema. */
export const bytesOf = (description: string, mediaTypes: readonly string[]) =>
  z.string().meta({ description, mediaTypes, [STREAM]: "bytes" satisfies StreamMark });
