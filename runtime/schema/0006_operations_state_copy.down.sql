-- The copy holds nothing state does not: it goes with its trigger and its check.
DROP TRIGGER IF EXISTS operations_state_copy ON once.operations;
DROP FUNCTION IF EXISTS once.operations_state_copy();
ALTER TABLE once.operations DROP CONSTRAINT IF EXISTS operations_state_last;
-- Dropped: a copy of state, which keeps every row's value.
-- squawk-ignore ban-drop-column
ALTER TABLE once.operations DROP COLUMN IF EXISTS state_last;
