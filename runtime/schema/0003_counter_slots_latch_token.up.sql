-- A Statement guard's units become rows: one row per unit held, numbered below the guard's
-- cap. Reservations of one key insert rows of their own and commit side by side instead of
-- queueing on one counter row's lock; the primary key keeps the cap, as no two reservations
-- can hold one slot and none takes a slot at or above its cap. token names the reservation
-- holding the slot, so a caller that lost its reservation's answer can give the units back.
CREATE TABLE IF NOT EXISTS once.counter_slots (
	name        text        NOT NULL,
	key         text        NOT NULL,
	slot        bigint      NOT NULL CHECK (slot >= 0),
	token       text        NULL,
	reserved_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key, slot)
);
COMMENT ON TABLE once.counter_slots IS 'once statement guards: one row per unit held, per guard name and key; a key uses as many units as it has rows. slot numbers the unit below the cap it was reserved under; token names the reservation holding it (NULL for units held before schema step 3).';
-- The units counted in once.counters move into slots numbered from 0, and each counter keeps
-- 0: from this step on a key's units are its slots.
INSERT INTO once.counter_slots (name, key, slot)
SELECT c.name, c.key, s.slot
FROM once.counters AS c CROSS JOIN LATERAL generate_series(0::bigint, c.used - 1) AS s (slot)
WHERE c.used > 0
ON CONFLICT (name, key, slot) DO NOTHING;
UPDATE once.counters SET used = 0, updated_at = clock_timestamp() WHERE used > 0;
COMMENT ON TABLE once.counters IS 'once statement guards before schema step 3, which moved every unit counted here into once.counter_slots; used stays 0 and cap is the cap of the last reservation made before that step.';
-- An Episode guard's firing carries the token of the call that fired it, so a caller that
-- lost the firing's answer can rearm exactly its own firing.
ALTER TABLE once.latches ADD COLUMN IF NOT EXISTS token text NULL;
COMMENT ON COLUMN once.latches.token IS 'the token of the call that fired the current episode (NULL when fired before schema step 3); a call that lost its firing''s answer rearms the latch only if it still holds that token.';
