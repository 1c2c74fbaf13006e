-- Steps 6 to 10 move once.operations.state to the row's end. A settle changes state, and
-- PostgreSQL logs an update that stays on its page as the new row's bytes less the prefix
-- and suffix it shares with the old row: with state fifth of eighteen columns, every column
-- after it went into the log with each settle, the unchanged token, attempts, fingerprint
-- and provider_ref among them. A column cannot move, so a new one is added at the end,
-- filled, and given the old one's name (step 9): every statement of every runtime reads
-- state by name throughout.
--
-- This step adds the copy, NOT NULL with a constant default, which PostgreSQL keeps once in
-- its catalog rather than in every row: no row is rewritten, so the table's strongest lock,
-- which adding a column takes, is held only while the catalog changes. Rows written before
-- this step read 'done' from the copy until step 7 copies the ones that are not done. From
-- this step on, a trigger makes the copy equal to state in every row inserted or updated, whichever
-- runtime writes it, and a check added NOT VALID holds every such row to that; step 8
-- validates it for the rows before.
--
-- Steps 6 to 9 run their DDL in DO blocks, for each does nothing where state has already
-- moved (step 9 is recorded, or state is the row's last column, as the down of step 9
-- leaves it): a migration tool applying these files after once.Migrate did, or an up
-- after a down, must not move it again.
DO $$
BEGIN
	IF EXISTS (SELECT FROM once.schema_steps WHERE step = 9)
		OR (SELECT attname FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum DESC LIMIT 1) = 'state' THEN
		RETURN;
	END IF;
	ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS state_last text NOT NULL DEFAULT 'done';
	CREATE OR REPLACE FUNCTION once.operations_state_copy() RETURNS trigger LANGUAGE plpgsql AS $f$
	BEGIN
		NEW.state_last := NEW.state;
		RETURN NEW;
	END
	$f$;
	DROP TRIGGER IF EXISTS operations_state_copy ON once.operations;
	CREATE TRIGGER operations_state_copy BEFORE INSERT OR UPDATE ON once.operations
		FOR EACH ROW EXECUTE FUNCTION once.operations_state_copy();
	ALTER TABLE once.operations DROP CONSTRAINT IF EXISTS operations_state_last;
	ALTER TABLE once.operations ADD CONSTRAINT operations_state_last CHECK (state_last = state) NOT VALID;
END
$$;
