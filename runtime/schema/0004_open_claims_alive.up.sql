-- An open claim carries its own stale window and its last sign of life, so the claim whose
-- holder shows life (Open.Do's heartbeat on a pool) is judged by its own window, 45 s by
-- default, and a claim handed to a job queue keeps its longer one, whoever finds it. Both
-- columns are nullable with no default: adding them rewrites nothing, and a claim made by an
-- older runtime (both NULL) is judged as before, by the finder's window from opened_at.
ALTER TABLE once.open_claims ADD COLUMN IF NOT EXISTS stale_after interval NULL;
ALTER TABLE once.open_claims ADD COLUMN IF NOT EXISTS alive_at timestamptz NULL;
COMMENT ON COLUMN once.open_claims.stale_after IS 'how long the claim may show no life before a later claim (or a sweep) closes it as stale: the window of the guard that made it (NULL = the finder''s window).';
COMMENT ON COLUMN once.open_claims.alive_at IS 'the last heartbeat of the claim''s holder (NULL = none since opened_at): the claim is stale once coalesce(alive_at, opened_at) + stale_after has passed.';
