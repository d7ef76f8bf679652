import helmet from "@fastify/helmet";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { LOOPD_ICON_SVG, LOOPD_LOGO_SVG } from "../loopd-logo.js";
import { documented } from "../openapi.js";
import { requestErrorResponses } from "../schemas/errors.js";
import { serializeTrusted } from "../plugins/serialize-trusted.js";

/** `GET /openapi.json`, and `GET /docs`: Swagger UI, its assets served from the package (no CDN). Add after the other routes. */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/openapi.json",
    {
      schema: {
        summary: "This API as OpenAPI 3.0",
        description: "Generated from the routes' own schemas. `GET /docs` shows it as an interactive reference.",
        operationId: "getOpenApi",
        tags: ["operations"],
        response: {
          200: documented(z.record(z.string(), z.unknown()), "The OpenAPI document"),
          ...requestErrorResponses,
        },
      },
      serializerCompiler: serializeTrusted,
    },
    // The document is plain JSON; its type (openapi-types) has no index signature.
    () => app.swagger() as unknown as Record<string, unknown>,
  );
  // Security headers on the reference page (its own strict CSP comes from staticCSP: hashes of its scripts and styles).
  await app.register(helmet, { global: false, contentSecurityPolicy: false });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    staticCSP: true,
    uiHooks: { onRequest: async (_req, reply) => void (await reply.helmet()) },
    uiConfig: { deepLinking: true, displayOperationId: true, tryItOutEnabled: true, persistAuthorization: true },
    // loopd's own name and icon, not the framework's logo.
    logo: { type: "image/svg+xml", content: LOOPD_LOGO_SVG, href: "/docs", target: "_self" },
    theme: {
      title: "loopd API",
      favicon: [
        { filename: "loopd-icon.svg", rel: "icon", sizes: "32x32", type: "image/svg+xml", content: LOOPD_ICON_SVG },
      ],
    },
  });
}
