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
--
-- Nor does it truncate where TRUNCATE would reach past these two empty tables or be refused:
-- a role that may not truncate them (looked at before the lock, which needs the same right),
-- a foreign key of another table that refers to either (PostgreSQL refuses to truncate a
-- table referred to unless the referring table goes too), a trigger on TRUNCATE, a
-- publication that sends truncations to subscribers, or a logical replication slot of this
-- database decoded by another plugin than pgoutput (it would stream the truncation). These
-- are looked at under the lock, which a new foreign key, trigger or table of a publication
-- waits behind. It says why in a notice and changes nothing; the table keeps its estimate
-- until autovacuum analyzes it. TRUNCATE ONLY leaves any table inheriting from them alone.
DO $$
DECLARE
	why text;
BEGIN
	IF (SELECT reltuples FROM pg_class WHERE oid = 'once.operations'::regclass) <> 0
		OR EXISTS (SELECT FROM once.operations) THEN
		RETURN;
	END IF;
	IF NOT (has_table_privilege('once.operations', 'TRUNCATE') AND has_table_privilege('once.checkpoints', 'TRUNCATE')) THEN
		why := format('role %I may not truncate them', current_user);
	ELSE
		LOCK TABLE once.operations, once.checkpoints IN ACCESS EXCLUSIVE MODE;
		IF EXISTS (SELECT FROM once.operations) OR EXISTS (SELECT FROM once.checkpoints) THEN
			RETURN;
		END IF;
		SELECT reason INTO why FROM (
			SELECT 1, format('%s refers to %s (foreign key %I)', conrelid::regclass, confrelid::regclass, conname)
			FROM pg_constraint
			WHERE contype = 'f' AND confrelid IN ('once.operations'::regclass, 'once.checkpoints'::regclass)
				AND (conrelid, confrelid) <> ('once.checkpoints'::regclass, 'once.operations'::regclass)
			UNION ALL
			SELECT 2, format('trigger %I on %s fires on TRUNCATE', tgname, tgrelid::regclass)
			FROM pg_trigger
			WHERE tgrelid IN ('once.operations'::regclass, 'once.checkpoints'::regclass) AND NOT tgisinternal AND tgtype & 32 <> 0
			UNION ALL
			SELECT 3, format('publication %I sends truncations of once.%I', p.pubname, pt.tablename)
			FROM pg_publication p JOIN pg_publication_tables pt ON pt.pubname = p.pubname
			WHERE p.pubtruncate AND pt.schemaname = 'once' AND pt.tablename IN ('operations', 'checkpoints')
			UNION ALL
			SELECT 4, format('logical replication slot %I (plugin %s) would stream the truncation', slot_name, plugin)
			FROM pg_replication_slots
			WHERE slot_type = 'logical' AND database = current_database() AND plugin <> 'pgoutput'
		) AS reasons (kind, reason)
		ORDER BY kind, reason DESC LIMIT 1;
	END IF;
	IF why IS NOT NULL THEN
		RAISE NOTICE 'once schema step 11 leaves once.operations as it is: %', why
			USING HINT = 'PostgreSQL plans statements on the table as scans of every row until autovacuum analyzes it (after fifty changed rows); ANALYZE once.operations once it holds rows to end that sooner.';
		RETURN;
	END IF;
	TRUNCATE ONLY once.operations, once.checkpoints;
END
$$;
