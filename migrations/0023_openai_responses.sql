CREATE TABLE "openai_responses" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"run_id" text NOT NULL,
	"after_event" integer DEFAULT 0 NOT NULL,
	"from_seq" integer,
	"previous_response_id" text,
	"background" boolean DEFAULT false NOT NULL,
	"request" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "openai_responses" ADD CONSTRAINT "openai_responses_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "openai_responses_conversation_created_at_idx" ON "openai_responses" USING btree ("conversation_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "openai_responses_run_id_idx" ON "openai_responses" USING btree ("run_id");