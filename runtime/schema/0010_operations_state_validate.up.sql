-- Step 10 of moving state to the row's end (step 6 says why): the checks step 9 added NOT
-- VALID are validated for the rows written before it. Each reads the table under a lock that
-- lets reads and writes go on; all hold, since each held of the column copied.
ALTER TABLE once.operations VALIDATE CONSTRAINT operations_state;
ALTER TABLE once.operations VALIDATE CONSTRAINT operations_settled;
ALTER TABLE once.operations VALIDATE CONSTRAINT operations_expiry;
ALTER TABLE once.operations VALIDATE CONSTRAINT operations_uncertain_since;
-- The moved column has no statistics yet: the planner's estimates for state (an operator's
-- WHERE state = 'uncertain') come back with this sample.
ANALYZE once.operations (state);
