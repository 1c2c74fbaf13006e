-- episode: once per episode. fired_at is the latch: set only where it is NULL (see
-- episode.go); a rearm sets it back to NULL.
CREATE TABLE IF NOT EXISTS once.latches (
	name       text        NOT NULL,
	key        text        NOT NULL,
	fired_at   timestamptz NULL,
	firings    bigint      NOT NULL CHECK (firings >= 0),
	rearmed_at timestamptz NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key)
);
COMMENT ON TABLE once.latches IS 'once episode guards: fired_at NULL means armed (the next call fires), set means the current episode has fired. firings counts episodes fired; rearmed_at is the last rearm.';
