import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES } from "../../core/messages.js";
import { notFound } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { bytesOf } from "../openapi.js";
import { attachmentParams } from "../schemas/attachments.js";
import { errorResponses } from "../schemas/errors.js";

export function attachmentRoutes(app: FastifyInstance, { services }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/conversations/:id/attachments/:attachment_id",
    {
      schema: {
        summary: "Read an attachment",
        description:
          "The bytes of an image or document a user message attached (its `attachment_id`), in their content type. " +
          "They are sent as a download (`content-disposition: attachment`, `x-content-type-options: nosniff`), never rendered as a page.",
        operationId: "getAttachment",
        tags: ["messages"],
        params: attachmentParams,
        response: {
          200: bytesOf("The attachment's bytes", [...IMAGE_MEDIA_TYPES, ...DOCUMENT_MEDIA_TYPES]),
          ...errorResponses,
        },
      },
      // The bytes are sent as they are (Fastify serializes no Buffer); what is serialized is an error.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (req, reply) => {
      const { id, attachment_id: attachmentId } = req.params;
      // Unknown, of another conversation or of another tenant: the same 404.
      const row = await services.store.attachments.get(req.tenant, id, attachmentId);
      if (!row) throw notFound("attachment", attachmentId);
      return (
        reply
          .type(row.mediaType)
          .header("x-content-type-options", "nosniff")
          .header("content-disposition", `attachment; filename="${row.id}"`)
          .header("cache-control", "private, max-age=31536000, immutable")
          // Bytes, not the string the schema documents them as.
          .send(row.data as unknown as string)
      );
    },
  );
}
