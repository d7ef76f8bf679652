-- A message needs one index: its place in its conversation. The id stays
-- unique by construction; a run finds its messages from the seq it started at.
ALTER TABLE "messages" DROP CONSTRAINT "messages_pkey";--> statement-breakpoint
DROP INDEX "messages_conversation_id_seq_key";--> statement-breakpoint
DROP INDEX "messages_run_id_idx";--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_pkey" PRIMARY KEY("conversation_id","seq");--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "first_seq" integer;--> statement-breakpoint
-- A run's row is updated in place as it goes (progress, lease): room in its
-- page lets those be heap-only updates, without new index entries.
ALTER TABLE "runs" SET (fillfactor = 70);--> statement-breakpoint
-- The history's length is max(seq): no conversation row rewritten on every append.
ALTER TABLE "conversations" DROP COLUMN "message_count";--> statement-breakpoint
-- Everything a run writes at one point, in one round trip: its new messages,
-- their events, its progress or its end, and the nudge to other processes,
-- only if the caller still owns the run (false otherwise, and nothing is
-- written). The caller numbers the messages (it holds the only writer of
-- the conversation); a history that does not end where it thinks is refused.
CREATE FUNCTION "loopd_save"(
  p_run_id text,
  p_owner text,
  p_conversation_id text,
  p_first_seq integer,
  p_messages jsonb,
  p_events jsonb,
  p_steps integer,
  p_usage jsonb,
  p_end jsonb,
  p_notify boolean
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  ended_at timestamptz;
BEGIN
  PERFORM 1 FROM runs WHERE id = p_run_id AND lease_owner = p_owner AND status IN ('queued', 'running') FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF jsonb_array_length(p_messages) > 0 THEN
    IF coalesce((SELECT max(seq) FROM messages WHERE conversation_id = p_conversation_id), 0) <> p_first_seq - 1 THEN
      RAISE EXCEPTION 'loopd_save: the history of % does not end at seq %', p_conversation_id, p_first_seq - 1 USING ERRCODE = '40001';
    END IF;
    INSERT INTO messages (id, conversation_id, seq, role, content, run_id)
      SELECT m->>'id', p_conversation_id, p_first_seq + ord::integer - 1, m->>'role', m->'content', p_run_id
      FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS t(m, ord);
  END IF;
  IF p_end IS NOT NULL THEN
    UPDATE runs SET
      status = p_end->>'status',
      stop_reason = p_end->>'stop_reason',
      error = nullif(p_end->'error', 'null'::jsonb),
      steps = coalesce(p_steps, steps),
      usage = coalesce(p_usage, usage),
      completed_at = now()
    WHERE id = p_run_id
    RETURNING completed_at INTO ended_at;
    UPDATE conversations SET updated_at = now() WHERE id = p_conversation_id;
  ELSIF p_steps IS NOT NULL THEN
    UPDATE runs SET steps = p_steps, usage = p_usage WHERE id = p_run_id;
  END IF;
  IF jsonb_array_length(p_events) > 0 THEN
    INSERT INTO run_events (run_id, seq, type, data)
      SELECT p_run_id, (e->>'seq')::integer, e->>'type',
        CASE WHEN ended_at IS NOT NULL AND (e->'data') ? 'run'
          THEN jsonb_set(e->'data', '{run,completedAt}', to_jsonb(ended_at))
          ELSE e->'data' END
      FROM jsonb_array_elements(p_events) AS e;
  END IF;
  IF p_notify THEN
    PERFORM pg_notify('loopd_run_events', p_run_id);
  END IF;
  RETURN true;
END
$$;
