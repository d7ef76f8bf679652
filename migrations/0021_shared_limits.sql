CREATE TABLE "open_streams" (
	"instance_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"streams" integer NOT NULL,
	"seen_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "open_streams_pkey" PRIMARY KEY("instance_id","tenant_id")
);
--> statement-breakpoint
CREATE TABLE "rate_limit_windows" (
	"key_id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"hits" integer NOT NULL
);
