import type { FastifyInstance } from "fastify";
import { AppError } from "../../errors.js";
import { fieldNestedDeeperThan } from "./json-nesting.js";
import { jsonCharsBeside } from "./json-chars-beside.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A route whose body may be larger for its attachments (a message's):
     * the most of its body that is not their base64 (`"data"` strings).
     * Text past it is refused before it is parsed.
     */
    textBodyLimit?: number;
  }
}

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
    const { textBodyLimit } = req.routeOptions.config;
    // Parsing and checking tens of megabytes of text stalls every request for seconds: the size alone refuses it.
    if (textBodyLimit !== undefined && text.length > textBodyLimit && jsonCharsBeside(text, "data") > textBodyLimit) {
      return done(
        new AppError(
          "payload_too_large",
          `body.content: the body, without its images' and documents' data, is larger than the ${textBodyLimit} bytes a body may have (BODY_LIMIT_BYTES); only images and documents may use a message's larger allowance`,
          { field: "body.content", limit: textBodyLimit },
        ),
        undefined,
      );
    }
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
