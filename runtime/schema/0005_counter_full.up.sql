-- A Statement guard finds a full key without counting its units: once.counter_full holds,
-- per guard name and key, a cap below which every slot was held when a refused reservation
-- saw it so. A refusal of a full key then reads one row (and checks no slot sits at or above
-- that cap) instead of counting the key's slot rows, and takes no lock.
--
-- Only a slot given back can make such a row untrue, so every delete of slots clears the
-- row and bumps its epoch, in the deleting transaction (the trigger below, which catches a
-- delete by hand too, and an update by hand that moves a slot). A refusal marks the key full
-- only if the epoch is still the one its snapshot saw, checked under the row's lock: a
-- give-back committed after the refusal's snapshot stops the mark. A TRUNCATE of the slots
-- fires no delete trigger; its own trigger clears every mark.
CREATE TABLE IF NOT EXISTS once.counter_full (
	name  text   NOT NULL,
	key   text   NOT NULL,
	cap   bigint NULL,
	epoch bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (name, key)
);
COMMENT ON TABLE once.counter_full IS 'once statement guards: per guard name and key, a cap below which every slot of once.counter_slots is held (NULL: not known full). Derived from once.counter_slots, read to refuse a full key without counting; epoch counts the deletes of the key''s slots.';
CREATE OR REPLACE FUNCTION once.counter_slots_given_back() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO once.counter_full AS f (name, key, cap, epoch)
	SELECT DISTINCT name, key, NULL::bigint, 1 FROM gone
	ON CONFLICT (name, key) DO UPDATE SET cap = NULL, epoch = f.epoch + 1;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION once.counter_slots_given_back() IS 'once statement guards: a key whose slots are deleted is no longer known full (once.counter_full).';
DROP TRIGGER IF EXISTS counter_slots_given_back ON once.counter_slots;
CREATE TRIGGER counter_slots_given_back AFTER DELETE ON once.counter_slots
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back();
DROP TRIGGER IF EXISTS counter_slots_moved ON once.counter_slots;
CREATE TRIGGER counter_slots_moved AFTER UPDATE ON once.counter_slots
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back();
-- TRUNCATE holds the slots' ACCESS EXCLUSIVE lock until it commits, and a refusal reads the
-- slots in the statement that marks, so no mark is made across it: clearing the marks made
-- before it is enough.
CREATE OR REPLACE FUNCTION once.counter_slots_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE once.counter_full SET cap = NULL, epoch = epoch + 1 WHERE cap IS NOT NULL;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION once.counter_slots_truncated() IS 'once statement guards: a TRUNCATE of once.counter_slots leaves no key known full (once.counter_full).';
DROP TRIGGER IF EXISTS counter_slots_truncated ON once.counter_slots;
CREATE TRIGGER counter_slots_truncated AFTER TRUNCATE ON once.counter_slots
FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_truncated();
