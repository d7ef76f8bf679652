ALTER TABLE "conversations" ADD COLUMN "fallbacks" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "models_used" jsonb;