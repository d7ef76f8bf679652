-- loopd_save_many: several runs' saves in one statement and one transaction
-- (group commit: when saves queue for the database, they go together, one
-- round trip and one commit instead of one each). Each save is loopd_save,
-- in a block of its own: one that fails (its history moved on, a lock
-- conflict) is undone alone and reported, and the others are kept. Results
-- come in the order of p_saves: {"owned": bool}, or {"code", "message"}.
CREATE OR REPLACE FUNCTION "loopd_save_many"(p_saves jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  s jsonb;
  owned boolean;
  results jsonb := '[]'::jsonb;
BEGIN
  FOR s IN SELECT value FROM jsonb_array_elements(p_saves) AS t(value) LOOP
    BEGIN
      owned := loopd_save(
        s->>'run_id', s->>'owner', s->>'conversation_id', (s->>'first_seq')::integer,
        s->'messages', s->'events', (s->>'steps')::integer, s->'usage', s->'end',
        (s->>'notify')::boolean, s->'spans');
      results := results || jsonb_build_array(jsonb_build_object('owned', owned));
    EXCEPTION WHEN OTHERS THEN
      results := results || jsonb_build_array(jsonb_build_object('code', SQLSTATE, 'message', SQLERRM));
    END;
  END LOOP;
  RETURN results;
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
  s jsonb;
  started jsonb;
  broken text;
  results jsonb := '[]'::jsonb;
BEGIN
  FOR s IN SELECT value FROM jsonb_array_elements(p_starts) AS t(value) LOOP
    BEGIN
      started := loopd_start_run(s->'run', (s->>'lease_ms')::integer, s->>'tenant', (s->>'cap')::integer, s->>'message_id', s->'content');
      results := results || jsonb_build_array(jsonb_build_object('started', started));
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS broken = CONSTRAINT_NAME;
      results := results || jsonb_build_array(jsonb_build_object('code', SQLSTATE, 'message', SQLERRM, 'constraint', nullif(broken, '')));
    END;
  END LOOP;
  RETURN results;
END
$$;
