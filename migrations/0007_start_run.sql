-- loopd_start_run: a run created in one statement, so that creating it holds
-- a pooled connection for one round trip instead of a transaction of seven
-- (under load, each of them waited for a busy event loop while the
-- connection stayed taken from the runs saving their steps).
--
-- The common case only: a conversation with no run waiting for the
-- application and a history that needs no repair (empty, or ending with an
-- answer that calls no tool). Otherwise it raises LD001 and changes nothing;
-- the caller then takes the general path (a transaction that supersedes or
-- repairs first).
--
-- Under the tenant's transaction lock when p_cap > 0 (the same lock and
-- count as runs.openOfTenant); returns {"open_runs": n} without creating
-- anything when the cap is reached, else {"run": <the runs row>}. The run's
-- first events are those the general path writes: run.created (1), then the
-- user message, announced by its event_seq (2).
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
  last_message messages%ROWTYPE;
  created runs%ROWTYPE;
BEGIN
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
  INSERT INTO runs (id, conversation_id, status, provider, model, usage, request, idempotency_key, request_hash, lease_owner, lease_expires_at)
    VALUES (p_run->>'id', conversation, 'running', p_run->>'provider', p_run->>'model', p_run->'usage', p_run->'request',
      p_run->>'idempotency_key', p_run->>'request_hash', p_run->>'lease_owner', now() + make_interval(secs => p_lease_ms / 1000.0));
  SELECT * INTO last_message FROM messages WHERE conversation_id = conversation ORDER BY seq DESC LIMIT 1;
  IF FOUND AND (last_message.role <> 'assistant' OR jsonb_path_exists(last_message.content, '$[*] ? (@.type == "tool_call")')) THEN
    RAISE EXCEPTION 'loopd_start_run: the history of % may need a repair first', conversation USING ERRCODE = 'LD001';
  END IF;
  last_seq := coalesce(last_message.seq, 0);
  INSERT INTO run_events (run_id, seq, type, data) VALUES (p_run->>'id', 1, 'run.created', '{}'::jsonb);
  INSERT INTO messages (id, conversation_id, seq, role, content, run_id, event_seq)
    VALUES (p_message_id, conversation, last_seq + 1, 'user', p_content, p_run->>'id', 2);
  UPDATE runs SET first_seq = last_seq + 1 WHERE id = p_run->>'id' RETURNING * INTO created;
  RETURN jsonb_build_object('run', to_jsonb(created));
END;
$$;
