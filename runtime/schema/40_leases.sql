-- lease: one holder at a time, expiring by itself. One row per guard and key, kept after
-- release so the fence only ever grows.
CREATE TABLE IF NOT EXISTS once.leases (
	name        text        NOT NULL,
	key         text        NOT NULL,
	holder      text        NOT NULL,
	fence       bigint      NOT NULL CHECK (fence > 0),
	acquired_at timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL,
	released_at timestamptz NULL,
	released_by text        NULL CHECK (released_by IN ('holder', 'operator')),
	PRIMARY KEY (name, key),
	CHECK ((released_at IS NULL) = (released_by IS NULL))
);
COMMENT ON TABLE once.leases IS 'once lease guards: held by holder (an owner token) until expires_at (database clock) or released_at. fence grows by one at every change of holder; a write fenced with an older number comes from a holder that lost the lease.';
