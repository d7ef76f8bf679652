CREATE TABLE "agent_versions" (
	"agent_id" text NOT NULL,
	"version" integer NOT NULL,
	"description" text,
	"configuration" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_versions_pkey" PRIMARY KEY("agent_id","version")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"archived_at" timestamp (3) with time zone,
	"from_file" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "agent_name" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "agent_version" integer;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "agent_overrides" jsonb;--> statement-breakpoint
ALTER TABLE "agent_versions" ADD CONSTRAINT "agent_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "agents_tenant_name_key" ON "agents" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "agents_tenant_created_at_id_idx" ON "agents" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);