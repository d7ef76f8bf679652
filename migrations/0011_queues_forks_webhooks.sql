DROP INDEX "runs_one_active_per_conversation_key";--> statement-breakpoint
DROP INDEX "runs_active_lease_idx";--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "webhook" jsonb;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "forked_from" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "webhook" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "queued_content" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "queue_rank" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "queue_order" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "queued_behind" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_reason" text;--> statement-breakpoint
CREATE INDEX "runs_queued_idx" ON "runs" USING btree ("conversation_id","queue_rank","queue_order") WHERE status = 'queued';--> statement-breakpoint
CREATE UNIQUE INDEX "runs_one_active_per_conversation_key" ON "runs" USING btree ("conversation_id") WHERE status in ('running', 'requires_action');--> statement-breakpoint
CREATE INDEX "runs_active_lease_idx" ON "runs" USING btree ("lease_expires_at") WHERE status = 'running';--> statement-breakpoint
-- The order queued runs came in (first come, first served per conversation).
CREATE SEQUENCE IF NOT EXISTS "loopd_run_queue_order";--> statement-breakpoint
-- loopd_start_run, as 0008 with three changes: it takes its conversation's
-- row lock first (FOR NO KEY UPDATE, which saves' FOR KEY SHARE does not
-- wait for), the lock every creator of a run and the starter of a queued one
-- take, so that a run never starts ahead of the queue; a conversation with
-- queued runs takes the general path (LD001); and the run keeps its webhook.
-- The tenant's lock comes after the conversation's, as on every path.
CREATE OR REPLACE FUNCTION "loopd_start_run"(
  p_run jsonb,
  p_lease_ms integer,
  p_tenant text,
  p_cap integer,
  p_message_id text,
  p_content jsonb
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  conversation text := p_run->>'conversation_id';
  open_runs integer;
  last_seq integer;
  created runs%ROWTYPE;
BEGIN
  PERFORM 1 FROM conversations WHERE id = conversation FOR NO KEY UPDATE;
  IF EXISTS (SELECT 1 FROM runs WHERE conversation_id = conversation AND status = 'queued') THEN
    RAISE EXCEPTION 'loopd_start_run: % has queued runs', conversation USING ERRCODE = 'LD001';
  END IF;
  IF p_cap > 0 THEN
    PERFORM pg_advisory_xact_lock(hashtext('loopd_tenant_runs:' || p_tenant));
    SELECT count(*) INTO open_runs FROM runs r JOIN conversations c ON c.id = r.conversation_id
      WHERE r.status IN ('queued', 'running', 'requires_action') AND c.tenant_id = p_tenant;
    IF open_runs >= p_cap THEN
      RETURN jsonb_build_object('open_runs', open_runs);
    END IF;
  END IF;
  -- The run's row first: from here on nothing else appends to the conversation
  -- (one open run per conversation, runs_one_active_per_conversation_key).
  INSERT INTO runs (id, conversation_id, status, provider, model, usage, request, idempotency_key, request_hash, lease_owner, lease_expires_at, webhook)
    VALUES (p_run->>'id', conversation, 'running', p_run->>'provider', p_run->>'model', p_run->'usage', p_run->'request',
      p_run->>'idempotency_key', p_run->>'request_hash', p_run->>'lease_owner', now() + make_interval(secs => p_lease_ms / 1000.0),
      nullif(p_run->'webhook', 'null'::jsonb));
  IF EXISTS (
    SELECT 1 FROM messages a CROSS JOIN LATERAL jsonb_array_elements(a.content) AS call
      WHERE a.conversation_id = conversation AND a.role = 'assistant'
        AND a.seq = (SELECT max(m.seq) FROM messages m WHERE m.conversation_id = conversation AND m.role = 'assistant')
        AND call->>'type' = 'tool_call'
        AND NOT EXISTS (SELECT 1 FROM messages t WHERE t.conversation_id = conversation AND t.seq > a.seq AND t.role = 'tool' AND t.content->0->>'tool_call_id' = call->>'id')
  ) THEN
    RAISE EXCEPTION 'loopd_start_run: the history of % needs a repair first', conversation USING ERRCODE = 'LD001';
  END IF;
  SELECT coalesce(max(seq), 0) INTO last_seq FROM messages WHERE conversation_id = conversation;
  INSERT INTO run_events (run_id, seq, type, data) VALUES (p_run->>'id', 1, 'run.created', '{}'::jsonb);
  INSERT INTO messages (id, conversation_id, seq, role, content, run_id, event_seq)
    VALUES (p_message_id, conversation, last_seq + 1, 'user', p_content, p_run->>'id', 2);
  UPDATE runs SET first_seq = last_seq + 1 WHERE id = p_run->>'id' RETURNING * INTO created;
  RETURN jsonb_build_object('run', to_jsonb(created));
END;
$$;
