CREATE TABLE "server_keys" (
	"name" text PRIMARY KEY NOT NULL,
	"key" "bytea" NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
