-- statement: once per count. One row per guard and key; a reservation adds n to used only
-- while used + n stays within cap, in one statement (see statement.go).
CREATE TABLE IF NOT EXISTS once.counters (
	name       text        NOT NULL,
	key        text        NOT NULL,
	used       bigint      NOT NULL CHECK (used >= 0),
	cap        bigint      NOT NULL CHECK (cap >= 0),
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key)
);
COMMENT ON TABLE once.counters IS 'once statement guards: units used against a cap, per guard name and key. used counts reservations not refunded; cap is the cap the last reservation was checked against.';
