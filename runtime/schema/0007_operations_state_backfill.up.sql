-- Step 7 of moving state to the row's end (step 6 says why): the rows written before step 6
-- get their state in the copy. Only the rows that are not done are written (the copy's
-- default already reads 'done'): the open, failed, released and uncertain ones, which are
-- few unless failed operations are kept for ever in numbers; the rest are only read. The
-- update takes no lock that stops reads or writes of other rows. A row it writes stays
-- locked until the step commits: the holder of an operation open at that moment waits that
-- long to settle it, or to show life. On a table too large for the file's
-- statement_timeout the step fails having changed nothing: raise the timeout in the file
-- and apply it again.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state_last' AND NOT attisdropped) THEN
		RETURN; -- state has moved already (step 6)
	END IF;
	UPDATE once.operations SET state_last = state WHERE state_last <> state;
END
$$;
