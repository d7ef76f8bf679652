ALTER TABLE "runs" ADD COLUMN "live_steps" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "live_input_tokens" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "live_output_tokens" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "live_cache_read_tokens" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "live_cache_write_tokens" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "live_cost_usd" numeric;--> statement-breakpoint
-- A run's steps and usage as read: the live columns while it runs, else
-- its own. Every reader of a run's progress reads it so (run-columns.ts):
-- the live columns, when set, are its progress, whatever wrote last.
-- STABLE, as jsonb_build_object is: the planner inlines it then (a CASE of
-- the row's columns), where an IMMUTABLE one over a STABLE body is a call
-- per row.
CREATE OR REPLACE FUNCTION "loopd_run_usage"(r runs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN r.live_steps IS NULL THEN r.usage ELSE jsonb_build_object(
    'input_tokens', r.live_input_tokens,
    'output_tokens', r.live_output_tokens,
    'cache_read_tokens', r.live_cache_read_tokens,
    'cache_write_tokens', r.live_cache_write_tokens,
    'cost_usd', r.live_cost_usd) END
$$;--> statement-breakpoint
-- loopd_save, as 0025 with one change: a step's progress goes into the live
-- columns, and a save that ends, pauses or parks the run writes its steps and
-- usage and clears them. (A trigger folding them would lock the row at every
-- update, a WAL record each, as any BEFORE ROW trigger does.)
CREATE OR REPLACE FUNCTION "loopd_save"(
  p_run_id text,
  p_owner text,
  p_conversation_id text,
  p_first_seq integer,
  p_messages jsonb,
  p_events jsonb,
  p_steps integer,
  p_usage jsonb,
  p_end jsonb,
  p_notify boolean,
  p_spans jsonb
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  ended_at timestamptz;
  required jsonb;
  outage jsonb;
BEGIN
  -- A run's end updates its conversation: the conversation's lock first, in
  -- the order every path takes the two (creating, queueing, starting a queued
  -- run, interrupting, deleting): conversation, then run. A pause (for the
  -- application, or out an outage) does not end it.
  IF p_end IS NOT NULL AND p_end->>'status' NOT IN ('requires_action', 'waiting') THEN
    PERFORM 1 FROM conversations WHERE id = p_conversation_id FOR NO KEY UPDATE;
  END IF;
  -- Ownership, under the run's row lock. A save that records progress takes
  -- the lock with its update (one WAL record, not a lock and an update).
  IF p_end IS NULL AND p_steps IS NOT NULL THEN
    -- Progress is a model's answer: an outage the run waited out is over.
    -- Into the live columns, the row's last (the update logs what changed, not the columns between).
    UPDATE runs SET
      live_steps = p_steps,
      live_input_tokens = (p_usage->>'input_tokens')::bigint,
      live_output_tokens = (p_usage->>'output_tokens')::bigint,
      live_cache_read_tokens = (p_usage->>'cache_read_tokens')::bigint,
      live_cache_write_tokens = (p_usage->>'cache_write_tokens')::bigint,
      live_cost_usd = (p_usage->>'cost_usd')::numeric,
      outage_since = NULL,
      outage_probes = 0
      WHERE id = p_run_id AND lease_owner = p_owner AND status = 'running';
  ELSE
    PERFORM 1 FROM runs WHERE id = p_run_id AND lease_owner = p_owner AND status = 'running' FOR UPDATE;
  END IF;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF jsonb_array_length(p_messages) > 0 THEN
    IF coalesce((SELECT max(seq) FROM messages WHERE conversation_id = p_conversation_id), 0) <> p_first_seq - 1 THEN
      RAISE EXCEPTION 'loopd_save: the history of % does not end at seq %', p_conversation_id, p_first_seq - 1 USING ERRCODE = '40001';
    END IF;
    INSERT INTO messages (id, conversation_id, seq, role, content, kind, summarizes, run_id, event_seq, span, started_event_seq, completed_event_seq, duration_ms)
      SELECT m->>'id', p_conversation_id, p_first_seq + ord::integer - 1, m->>'role', m->'content', m->>'kind', m->'summarizes', p_run_id, (m->>'event_seq')::integer, m->'span',
        (m->>'started_event_seq')::integer, (m->>'completed_event_seq')::integer, (m->>'duration_ms')::integer
      FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS t(m, ord);
  END IF;
  IF p_end IS NOT NULL AND p_end->>'status' = 'requires_action' THEN
    required := jsonb_build_object(
      'tool_calls', p_end->'required_action'->'tool_calls',
      'expires_at', to_jsonb(now() + make_interval(secs => (p_end->'required_action'->>'timeout_s')::double precision)));
    UPDATE runs SET
      status = 'requires_action',
      required_action = required,
      action_expires_at = (required->>'expires_at')::timestamptz,
      paused_at = now(),
      lease_owner = NULL,
      lease_expires_at = NULL,
      steps = coalesce(p_steps, live_steps, steps),
      usage = coalesce(p_usage, loopd_run_usage(runs)),
      live_steps = NULL, live_input_tokens = NULL, live_output_tokens = NULL,
      live_cache_read_tokens = NULL, live_cache_write_tokens = NULL, live_cost_usd = NULL
    WHERE id = p_run_id;
  ELSIF p_end IS NOT NULL AND p_end->>'status' = 'waiting' THEN
    -- Every model down, and the run waits it out: parked without a lease,
    -- with the error that parked it, until wake_at (when any process may
    -- claim it and call the model again) or give_up_at (when it fails).
    UPDATE runs SET
      status = 'waiting',
      error = nullif(p_end->'error', 'null'::jsonb),
      wake_at = now() + make_interval(secs => (p_end->'outage'->>'wake_in_ms')::double precision / 1000),
      give_up_at = now() + make_interval(secs => (p_end->'outage'->>'give_up_in_ms')::double precision / 1000),
      outage_since = coalesce((p_end->'outage'->>'since')::timestamptz, now()),
      outage_probes = (p_end->'outage'->>'probes')::integer,
      lease_owner = NULL,
      lease_expires_at = NULL,
      steps = coalesce(p_steps, live_steps, steps),
      usage = coalesce(p_usage, loopd_run_usage(runs)),
      live_steps = NULL, live_input_tokens = NULL, live_output_tokens = NULL,
      live_cache_read_tokens = NULL, live_cache_write_tokens = NULL, live_cost_usd = NULL
    WHERE id = p_run_id
    RETURNING jsonb_build_object('wakeAt', wake_at, 'giveUpAt', give_up_at, 'outageSince', outage_since, 'outageProbes', outage_probes) INTO outage;
  ELSIF p_end IS NOT NULL THEN
    UPDATE runs SET
      status = p_end->>'status',
      stop_reason = p_end->>'stop_reason',
      error = nullif(p_end->'error', 'null'::jsonb),
      budget_exceeded = p_end->>'budget_exceeded',
      result = nullif(p_end->'result', 'null'::jsonb),
      wake_at = NULL,
      give_up_at = NULL,
      steps = coalesce(p_steps, live_steps, steps),
      usage = coalesce(p_usage, loopd_run_usage(runs)),
      live_steps = NULL, live_input_tokens = NULL, live_output_tokens = NULL,
      live_cache_read_tokens = NULL, live_cache_write_tokens = NULL, live_cost_usd = NULL,
      completed_at = now()
    WHERE id = p_run_id
    RETURNING completed_at INTO ended_at;
    UPDATE conversations SET updated_at = now() WHERE id = p_conversation_id;
    -- A refused turn stays in the history, marked, and is never sent again
    -- (the provider refuses every request whose context still holds it).
    -- That changes messages already written: the history's version says so
    -- to any copy of it kept in memory (on this instance or another).
    IF p_end->>'stop_reason' IN ('refusal', 'content_filter') THEN
      UPDATE messages SET excluded = 'refusal'
        WHERE conversation_id = p_conversation_id AND run_id = p_run_id
          AND seq >= (SELECT first_seq FROM runs WHERE id = p_run_id);
      UPDATE conversations SET history_version = history_version + 1 WHERE id = p_conversation_id;
    END IF;
  END IF;
  IF jsonb_array_length(p_events) > 0 THEN
    INSERT INTO run_events (run_id, seq, type, data)
      SELECT p_run_id, (e->>'seq')::integer, e->>'type',
        CASE
          WHEN ended_at IS NOT NULL AND (e->'data') ? 'run' THEN jsonb_set(e->'data', '{run,completedAt}', to_jsonb(ended_at))
          WHEN required IS NOT NULL AND (e->'data') ? 'run' THEN jsonb_set(e->'data', '{run,requiredAction}', required)
          WHEN outage IS NOT NULL AND (e->'data') ? 'run' THEN jsonb_set(e->'data', '{run}', (e->'data'->'run') || outage)
          ELSE e->'data' END
      FROM jsonb_array_elements(p_events) AS e;
  END IF;
  -- The spans of this save that tell no message, numbered on from the run's
  -- last one, before the spans of the messages saved with them, or after
  -- them when a span says so (its next_message_seq: a run's end written with
  -- its last answer).
  -- A tool list and system prompt (model.setup) is stored once per run.
  IF jsonb_array_length(p_spans) > 0 THEN
    INSERT INTO run_spans (run_id, seq, type, data, next_message_seq)
      SELECT p_run_id, (SELECT coalesce(max(seq), 0) FROM run_spans WHERE run_id = p_run_id) + row_number() OVER (ORDER BY ord), s->>'type',
        CASE WHEN ended_at IS NOT NULL AND s->>'type' = 'run.end' THEN jsonb_set(s->'data', '{completed_at}', to_jsonb(ended_at)) ELSE s->'data' END,
        coalesce((s->>'next_message_seq')::integer, p_first_seq)
      FROM jsonb_array_elements(p_spans) WITH ORDINALITY AS t(s, ord)
      WHERE s->>'type' <> 'model.setup'
        OR NOT EXISTS (SELECT 1 FROM run_spans x WHERE x.run_id = p_run_id AND x.type = 'model.setup' AND x.data->>'hash' = s->'data'->>'hash');
  END IF;
  IF p_notify THEN
    PERFORM pg_notify('loopd_run_events', p_run_id);
  END IF;
  RETURN true;
END
$$;
