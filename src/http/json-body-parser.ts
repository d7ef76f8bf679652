import type { FastifyInstance } from "fastify";
import { AppError } from "../errors.js";
import { fieldNestedDeeperThan } from "./json-nesting.js";

export interface JsonBodyOptions {
  /**
   * The deepest a request body may nest. Deeper text is refused before it is
   * parsed: the validators, and the embedded database's JSON parser, walk
   * values recursively, and a few thousand levels overflow their stacks.
   */
  maxDepth: number;
}

/**
 * Bodies are JSON and nothing else: every other content type is answered 415
 * by Fastify once its default text parser is gone. An empty JSON body is
 * read as no body, as if the header had not been sent.
 */
export function useJsonBodies(app: FastifyInstance, { maxDepth }: JsonBodyOptions): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    const field = fieldNestedDeeperThan(text, maxDepth);
    if (field !== null) {
      return done(
        new AppError("invalid_request", `${field}: nested deeper than the ${maxDepth} levels a request body may have`, {
          field,
          limit: maxDepth,
        }),
        undefined,
      );
    }
    parseJson(req, text, done);
  });
}
