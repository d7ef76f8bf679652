ALTER TABLE "conversations" ADD COLUMN "agents" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "parent" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "children" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_parent_call_key" ON "conversations" USING btree (("parent"->>'run_id'),("parent"->>'tool_call_id')) WHERE "conversations"."parent" is not null;