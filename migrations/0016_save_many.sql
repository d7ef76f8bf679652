-- loopd_save_many: several runs' saves in one statement and one transaction
-- (group commit: when saves queue for the database, they go together, one
-- round trip and one commit instead of one each). Each save is loopd_save,
-- in a block of its own: one that fails (its history moved on, a lock
-- conflict) is undone alone and reported, and the others are kept. Results
-- come in the order of p_saves: {"owned": bool}, or {"code", "message"}.
CREATE OR REPLACE FUNCTION "loopd_save_many"(p_saves jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  s record;
  owned boolean;
  answers jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_saves)]);
BEGIN
  -- In the order of the runs' ids (byte order), the order lease renewals lock runs in: the two never wait
  -- for each other in a cycle. Each answer at its save's place in p_saves.
  FOR s IN SELECT value, ord FROM jsonb_array_elements(p_saves) WITH ORDINALITY AS t(value, ord) ORDER BY value->>'run_id' COLLATE "C" LOOP
    BEGIN
      owned := loopd_save(
        s.value->>'run_id', s.value->>'owner', s.value->>'conversation_id', (s.value->>'first_seq')::integer,
        s.value->'messages', s.value->'events', (s.value->>'steps')::integer, s.value->'usage', s.value->'end',
        (s.value->>'notify')::boolean, s.value->'spans');
      answers[s.ord] := jsonb_build_object('owned', owned);
    EXCEPTION WHEN OTHERS THEN
      answers[s.ord] := jsonb_build_object('code', SQLSTATE, 'message', SQLERRM);
    END;
  END LOOP;
  RETURN to_jsonb(answers);
END
$$;
--> statement-breakpoint
-- loopd_start_runs: several runs started in one statement and one
-- transaction, as loopd_save_many saves: each is loopd_start_run in a block
-- of its own, undone alone when it fails, and reported (with the constraint
-- it broke, if any). Results in the order of p_starts: {"started": …} as
-- loopd_start_run answers, or {"code", "message", "constraint"}.
CREATE OR REPLACE FUNCTION "loopd_start_runs"(p_starts jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  s record;
  started jsonb;
  broken text;
  answers jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_starts)]);
BEGIN
  -- In the order of their tenants, then of their conversations (byte order): each start locks its
  -- conversation, then (with a cap) its tenant, held to the end of the batch; two batches take them in
  -- one order and never wait for each other in a cycle. Each answer at its start's place in p_starts.
  FOR s IN SELECT value, ord FROM jsonb_array_elements(p_starts) WITH ORDINALITY AS t(value, ord)
      ORDER BY value->>'tenant' COLLATE "C", value->'run'->>'conversation_id' COLLATE "C" LOOP
    BEGIN
      started := loopd_start_run(s.value->'run', (s.value->>'lease_ms')::integer, s.value->>'tenant', (s.value->>'cap')::integer, s.value->>'message_id', s.value->'content');
      answers[s.ord] := jsonb_build_object('started', started);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS broken = CONSTRAINT_NAME;
      answers[s.ord] := jsonb_build_object('code', SQLSTATE, 'message', SQLERRM, 'constraint', nullif(broken, ''));
    END;
  END LOOP;
  RETURN to_jsonb(answers);
END
$$;
