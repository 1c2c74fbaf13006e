-- Step 10 analyzes once.operations, and on an empty table (every new database) that records
-- a count of no rows, which the planner trusts until autovacuum analyzes the table again.
-- Meanwhile it plans each statement on the table as a scan of every row; and a statement
-- prepared while the table is small (pgx prepares each statement it sends, and PostgreSQL
-- keeps a prepared statement's generic plan) goes on scanning as the table grows, so every
-- settle reads the whole table. A table never analyzed is planned as ten pages at least,
-- which takes its indexes. TRUNCATE gives an empty table that state back.
--
-- This step truncates the table only while it is empty: nothing is locked where the count
-- says rows or a row is there; otherwise it takes the ACCESS EXCLUSIVE lock TRUNCATE would
-- take, checks again under it that once.operations and once.checkpoints (whose key refers to
-- it) hold no row, and truncates both, so the lock lasts as long as a catalog change on two
-- empty tables. A table analyzed empty that holds rows by now is left as it is: autovacuum
-- analyzes it again once fifty rows have changed (its default threshold), and PostgreSQL
-- makes the kept plans again with each new estimate. The step runs its DDL in a DO block
-- for the checks, which squawk does not read inside.
DO $$
BEGIN
	IF (SELECT reltuples FROM pg_class WHERE oid = 'once.operations'::regclass) <> 0
		OR EXISTS (SELECT FROM once.operations) THEN
		RETURN;
	END IF;
	LOCK TABLE once.operations, once.checkpoints IN ACCESS EXCLUSIVE MODE;
	IF NOT EXISTS (SELECT FROM once.operations) AND NOT EXISTS (SELECT FROM once.checkpoints) THEN
		TRUNCATE once.operations, once.checkpoints;
	END IF;
END
$$;
