-- Step 9 of moving state to the row's end (step 6 says why): the copy, validated equal to
-- state in every row by step 8, takes state's name, default and checks, and the old column
-- goes, with the checks that read it. No row is rewritten or read (a dropped column stays
-- in the rows already written and reads as nothing), so the table's strongest lock, which
-- the drop and the rename take, is held only while the catalog changes, under the
-- lock_timeout. The checks come back NOT VALID (every row written from now on is checked)
-- and step 10 validates them for the rows before. A database where state has moved already
-- is left as it is.
--
-- What else uses the old column would go with it silently (an index of your own on state)
-- or stop the drop (a view, a policy): the step names such objects and changes nothing;
-- drop them, apply the step, and make them again on the new column. Grants on the column
-- alone (GRANT SELECT (state) ...) are given again on the moved column.
DROP TRIGGER IF EXISTS operations_state_copy ON once.operations;
DROP FUNCTION IF EXISTS once.operations_state_copy();
DO $$
DECLARE
	used text;
	grants text[];
	g text;
BEGIN
	IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state_last' AND NOT attisdropped) THEN
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'once.operations'::regclass AND conname = 'operations_state_last' AND convalidated) THEN
		RAISE EXCEPTION 'once.operations.state_last is not known to equal state in every row: apply schema step 8 (operations_state_copied) first';
	END IF;
	SELECT string_agg(pg_describe_object(d.classid, d.objid, d.objsubid), ', ' ORDER BY d.classid, d.objid) INTO used
	FROM pg_depend d
	WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = 'once.operations'::regclass
		AND d.refobjsubid = (SELECT attnum FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state')
		AND d.classid <> 'pg_attrdef'::regclass
		AND NOT (d.classid = 'pg_constraint'::regclass AND d.objid IN (SELECT oid FROM pg_constraint WHERE conrelid = 'once.operations'::regclass
			AND conname IN ('operations_state', 'operations_settled', 'operations_expiry', 'operations_uncertain_since', 'operations_state_last')));
	IF used IS NOT NULL THEN
		RAISE EXCEPTION 'once.operations.state is used by %: drop these, apply this step, and make them again on the moved column', used;
	END IF;
	SELECT array_agg(format('GRANT %s (state) ON once.operations TO %s%s', a.privilege_type,
		CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
		CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) ORDER BY a.grantee, a.privilege_type) INTO grants
	FROM pg_attribute p, aclexplode(p.attacl) a
	WHERE p.attrelid = 'once.operations'::regclass AND p.attname = 'state' AND NOT p.attisdropped;
	ALTER TABLE once.operations DROP COLUMN state;
	ALTER TABLE once.operations RENAME COLUMN state_last TO state;
	FOREACH g IN ARRAY coalesce(grants, '{}') LOOP
		EXECUTE g;
	END LOOP;
	ALTER TABLE once.operations ALTER COLUMN state SET DEFAULT 'open';
	ALTER TABLE once.operations ADD CONSTRAINT operations_state CHECK (state IN ('open', 'done', 'failed', 'released', 'uncertain')) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_settled CHECK ((state = 'open') = (settled_at IS NULL)) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_expiry CHECK (expires_at IS NULL OR state IN ('done', 'failed', 'released')) NOT VALID;
	ALTER TABLE once.operations ADD CONSTRAINT operations_uncertain_since CHECK ((state = 'uncertain') = (uncertain_since IS NOT NULL)) NOT VALID;
END
$$;
COMMENT ON COLUMN once.operations.state IS 'open = an attempt holds the claim (alive_at says when it last showed life); done = the effect happened, result holds what it returned; failed = a terminal failure, error is replayed to every retry; released = the last attempt failed in a way that is safe to retry, the next call runs again; uncertain = the effect may or may not have happened (its holder died, or its result was lost): never retried until an operator resolves it.';
