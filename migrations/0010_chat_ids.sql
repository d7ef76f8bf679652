ALTER TABLE "conversations" ADD COLUMN "chat_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_tenant_chat_id_idx" ON "conversations" USING btree ("tenant_id","chat_id");