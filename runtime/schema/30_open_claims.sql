-- open: once while the work is open. At most one row per guard and key is open, by the
-- partial unique index; closed rows stay as history.
CREATE TABLE IF NOT EXISTS once.open_claims (
	id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name      text        NOT NULL,
	key       text        NOT NULL,
	state     text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'failed', 'stale')),
	token     text        NOT NULL,
	opened_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	closed_at timestamptz NULL,
	reason    text        NULL,
	CHECK ((state = 'open') = (closed_at IS NULL))
);
-- Every ON CONFLICT against it repeats this predicate as a literal, text-identical.
CREATE UNIQUE INDEX IF NOT EXISTS open_claims_name_key_once_open ON once.open_claims (name, key) WHERE state = 'open';
COMMENT ON TABLE once.open_claims IS 'once open guards: one row per claim. state open = work in progress (at most one per name and key); done, failed (reason says why) or stale (open longer than the guard''s window, closed by a later claim or a sweep). token is the owner''s proof.';
