-- The list of uncertain operations is indexed on state again, and the constraint and the
-- column go: uncertain_since says nothing state and settled_at do not.
CREATE INDEX IF NOT EXISTS operations_attention ON once.operations (name, settled_at) WHERE state = 'uncertain';
DROP INDEX IF EXISTS once.operations_uncertain;
ALTER TABLE once.operations DROP CONSTRAINT IF EXISTS operations_uncertain_since;
ALTER TABLE once.operations DROP COLUMN IF EXISTS uncertain_since;
ALTER TABLE once.operations RESET (fillfactor);
