-- A forever operation's settle (open to done or failed: state, result, settled_at) becomes a
-- HOT update: PostgreSQL writes the new row version beside the old one, and no index entry,
-- when no index reads a column the update changes and the page has room. operations_attention
-- read state and settled_at, which every settle changes; the list of uncertain operations it
-- served is indexed on uncertain_since instead, which stays NULL from open to done. A guard
-- with a retention still sets expires_at, which the reaper's index reads.
ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS uncertain_since timestamptz NULL;
COMMENT ON COLUMN once.operations.uncertain_since IS 'when the operation became uncertain (NULL unless state is uncertain): the order in which an operator reconciles them.';
UPDATE once.operations SET uncertain_since = settled_at WHERE state = 'uncertain' AND uncertain_since IS NULL;
-- NOT VALID still checks every row written from now on: a process of an older runtime that
-- marks an operation uncertain without uncertain_since fails loudly rather than hiding it from
-- the list. Rows already there were set just above.
ALTER TABLE once.operations ADD CONSTRAINT operations_uncertain_since CHECK ((state = 'uncertain') = (uncertain_since IS NOT NULL)) NOT VALID;
-- Both indexes are built in the step's transaction: a partial index over the few uncertain
-- rows, and the drop of one that no statement of this runtime uses.
-- Not CONCURRENTLY: it covers only uncertain rows, built in the step's transaction under its lock_timeout.
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS operations_uncertain ON once.operations (name, uncertain_since) WHERE uncertain_since IS NOT NULL;
-- Not CONCURRENTLY: dropped in the step's transaction under its lock_timeout, so a blocked drop times out.
-- squawk-ignore require-concurrent-index-deletion
DROP INDEX IF EXISTS once.operations_attention;
-- Room in each page for a settled version of every row inserted there.
ALTER TABLE once.operations SET (fillfactor = 80);
