-- Statement guards count units in once.counters again: each key's slots are added to its
-- counter, which this step's up left at 0. A counter made here takes its units as its cap:
-- the next reservation of the older runtime sets the cap it checks against.
INSERT INTO once.counters AS c (name, key, used, cap)
SELECT name, key, count(*), count(*) FROM once.counter_slots GROUP BY name, key
ON CONFLICT (name, key) DO UPDATE SET used = c.used + EXCLUDED.used, updated_at = clock_timestamp();
COMMENT ON TABLE once.counters IS 'once statement guards: units used against a cap, per guard name and key. used counts reservations not refunded; cap is the cap the last reservation was checked against.';
-- The slots' units are counted above, so their rows go; the table stays, empty, for the
-- down asked for by name to drop (its tokens name reservations that only a runtime of this
-- step could give back).
DELETE FROM once.counter_slots;
-- Dropped: the runtime this down returns to neither writes nor reads it; fired_at and
-- firings still say whether and how often each latch fired.
-- squawk-ignore ban-drop-column
ALTER TABLE once.latches DROP COLUMN IF EXISTS token;
