-- The list of uncertain operations is indexed on state again, and the constraint and the
-- column go: uncertain_since says nothing state and settled_at do not.
-- Not CONCURRENTLY: it covers only uncertain rows, built in the step's transaction under its lock_timeout.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS operations_attention ON once.operations (name, settled_at) WHERE state = 'uncertain';
-- Not CONCURRENTLY: dropped in the step's transaction under its lock_timeout, so a blocked drop times out.
-- squawk-ignore require-concurrent-index-deletion
DROP INDEX IF EXISTS once.operations_uncertain;
ALTER TABLE once.operations DROP CONSTRAINT IF EXISTS operations_uncertain_since;
-- Dropped: no statement of the runtime this down returns to reads it, and state and settled_at hold what it said.
-- squawk-ignore ban-drop-column
ALTER TABLE once.operations DROP COLUMN IF EXISTS uncertain_since;
ALTER TABLE once.operations RESET (fillfactor);
