ALTER TABLE "conversations" ADD COLUMN "context" jsonb;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "caching" boolean DEFAULT true NOT NULL;