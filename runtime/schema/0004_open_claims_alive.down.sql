-- Dropped: no statement of the runtime this down returns to reads them, and they hold only
-- the timing of claims still open (which that runtime judges by opened_at), no promise kept.
-- squawk-ignore ban-drop-column
ALTER TABLE once.open_claims DROP COLUMN IF EXISTS alive_at;
-- squawk-ignore ban-drop-column
ALTER TABLE once.open_claims DROP COLUMN IF EXISTS stale_after;
