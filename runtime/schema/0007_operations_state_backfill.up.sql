-- Step 7 of moving state to the row's end (step 6 says why): the rows written before step 6
-- get their state in the copy. Only the rows that are not done are written (the copy's
-- default already reads 'done'), so the update writes the few open, failed, released and
-- uncertain rows and only reads the rest; it takes no lock that stops reads or writes of
-- other rows. A row it writes is locked until the step commits: the holder of an operation
-- open at that moment waits that long to settle it. On a table too large for the file's
-- statement_timeout the step fails having changed nothing; apply it again with a longer one.
UPDATE once.operations SET state_last = state WHERE state_last <> state;
-- Reads every row again under a lock that lets reads and writes go on, and fails if any
-- copy differs: step 8 drops state only once this has passed.
ALTER TABLE once.operations VALIDATE CONSTRAINT operations_state_last;
