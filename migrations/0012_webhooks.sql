CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"type" text NOT NULL,
	"url" text NOT NULL,
	"run" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_run_id_idx" ON "webhook_deliveries" USING btree ("run_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
-- The outbox of run webhooks: a delivery for each end (and each pause) of a
-- run that has a webhook whose events (absent: all) name it, written by the
-- statement that changes the run's status, so in the same transaction as the
-- end itself whichever path ends the run (loopd_save, a paused run closed, a
-- queued run cancelled, a recovery). Its id is the webhook-id: <run_id>.<type>;
-- a run pauses again after each answer, and its second pause is
-- <run_id>.run.requires_action.2, the third .3 (counted from the pauses before,
-- under the run's row lock: stable, and unique). The row is snapshotted
-- without a queued run's content (a copy of its user message: not the Run's).
-- The nudge wakes the delivery workers at once (at commit).
CREATE OR REPLACE FUNCTION "loopd_webhook_outbox"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event text := 'run.' || NEW.status;
  delivery text := NEW.id || '.' || event;
  earlier integer;
BEGIN
  IF jsonb_typeof(NEW.webhook->'events') = 'array' AND NOT (NEW.webhook->'events') ? event THEN
    RETURN NULL;
  END IF;
  IF NEW.status = 'requires_action' THEN
    SELECT count(*) INTO earlier FROM webhook_deliveries WHERE run_id = NEW.id AND type = event;
    IF earlier > 0 THEN
      delivery := delivery || '.' || (earlier + 1);
    END IF;
  END IF;
  INSERT INTO webhook_deliveries (id, run_id, type, url, run)
    VALUES (delivery, NEW.id, event, NEW.webhook->>'url', to_jsonb(NEW) - 'queued_content')
    ON CONFLICT (id) DO NOTHING;
  PERFORM pg_notify('loopd_webhooks', delivery);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "runs_webhook_on_status" AFTER UPDATE OF "status" ON "runs" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.webhook IS NOT NULL
    AND NEW.status IN ('completed', 'incomplete', 'failed', 'cancelled', 'requires_action'))
  EXECUTE FUNCTION "loopd_webhook_outbox"();--> statement-breakpoint
-- A run written already ended (none is today; cheap to cover).
CREATE TRIGGER "runs_webhook_on_insert" AFTER INSERT ON "runs" FOR EACH ROW
  WHEN (NEW.webhook IS NOT NULL AND NEW.status IN ('completed', 'incomplete', 'failed', 'cancelled', 'requires_action'))
  EXECUTE FUNCTION "loopd_webhook_outbox"();
