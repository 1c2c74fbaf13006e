-- Step 8 of moving state to the row's end (step 6 says why): the copy, validated equal to
-- state in every row by step 7, takes state's name, default and checks, and the old column
-- goes, with the checks that read it. No row is rewritten or read: a dropped column stays
-- in the rows already written and reads as nothing. The checks come back NOT VALID (every
-- row written from now on is checked) and step 9 validates them for the rows before. A
-- database where this step has already run (its down keeps state at the end) is left as it
-- is.
DROP TRIGGER IF EXISTS operations_state_copy ON once.operations;
DROP FUNCTION IF EXISTS once.operations_state_copy();
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state_last' AND NOT attisdropped) THEN
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'once.operations'::regclass AND conname = 'operations_state_last' AND convalidated) THEN
		RAISE EXCEPTION 'once.operations.state_last is not known to equal state in every row: apply schema step 7 (operations_state_backfill) first';
	END IF;
	ALTER TABLE once.operations DROP COLUMN state;
	ALTER TABLE once.operations RENAME COLUMN state_last TO state;
	ALTER TABLE once.operations ALTER COLUMN state SET DEFAULT 'open';
	ALTER TABLE once.operations ADD CONSTRAINT operations_state CHECK (state IN ('open', 'done', 'failed', 'released', 'uncertain')) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_settled CHECK ((state = 'open') = (settled_at IS NULL)) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_expiry CHECK (expires_at IS NULL OR state IN ('done', 'failed', 'released')) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_uncertain_since CHECK ((state = 'uncertain') = (uncertain_since IS NOT NULL)) NOT VALID;
END
$$;
COMMENT ON COLUMN once.operations.state IS 'open = an attempt holds the claim (alive_at says when it last showed life); done = the effect happened, result holds what it returned; failed = a terminal failure, error is replayed to every retry; released = the last attempt failed in a way that is safe to retry, the next call runs again; uncertain = the effect may or may not have happened (its holder died, or its result was lost): never retried until an operator resolves it.';
