-- Steps 6 to 9 move once.operations.state to the row's end. A settle changes state, and
-- PostgreSQL logs an update that stays on its page as the new row's bytes less the prefix
-- and suffix it shares with the old row: with state fifth of eighteen columns, every column
-- after it went into the log with each settle (token, attempts, fingerprint, provider_ref,
-- claimed_at). A column cannot move, so a new one is added at the end, filled, and given the
-- old one's name (step 8): every statement of every runtime reads state by name throughout.
--
-- This step adds the copy, NOT NULL with a constant default, which PostgreSQL keeps once in
-- its catalog rather than in every row, so no row is rewritten: rows written before this
-- step read 'done' from it until step 7 copies the few that are not done. From this step on,
-- a trigger makes the copy equal to state in every row inserted or updated, whichever
-- runtime writes it, and a check added NOT VALID holds every such row to that; step 7
-- validates it for the rows before.
ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS state_last text NOT NULL DEFAULT 'done';
CREATE OR REPLACE FUNCTION once.operations_state_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.state_last := NEW.state;
	RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS operations_state_copy ON once.operations;
CREATE TRIGGER operations_state_copy BEFORE INSERT OR UPDATE ON once.operations
	FOR EACH ROW EXECUTE FUNCTION once.operations_state_copy();
ALTER TABLE once.operations DROP CONSTRAINT IF EXISTS operations_state_last;
ALTER TABLE once.operations ADD CONSTRAINT operations_state_last CHECK (state_last = state) NOT VALID;
