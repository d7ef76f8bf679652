CREATE TABLE "webhook_secrets" (
	"tenant_id" text NOT NULL,
	"generation" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY("tenant_id","generation")
);
