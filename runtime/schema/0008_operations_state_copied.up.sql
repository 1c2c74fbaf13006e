-- Step 8 of moving state to the row's end (step 6 says why): the check that the copy equals
-- state is validated for the rows written before step 6. It reads every row under a lock
-- that lets reads and writes go on, and fails if any copy differs; step 9 drops state only
-- once it has passed. A step of its own, so the rows step 7 wrote are not held locked while
-- it reads.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state_last' AND NOT attisdropped) THEN
		RETURN; -- state has moved already (step 6)
	END IF;
	ALTER TABLE once.operations VALIDATE CONSTRAINT operations_state_last;
END
$$;
