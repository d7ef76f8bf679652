-- A fork copies the attachments its messages refer to, keeping their ids:
-- an attachment's id is unique within its conversation, not across them.
ALTER TABLE "attachments" DROP CONSTRAINT "attachments_pkey";--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_pkey" PRIMARY KEY("conversation_id","id");--> statement-breakpoint
CREATE INDEX "attachments_id_idx" ON "attachments" USING btree ("id");
