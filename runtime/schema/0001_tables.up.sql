-- once's own tables live in their own schema, so an operator finds every promise's state in
-- one place: \dt once.*
CREATE SCHEMA IF NOT EXISTS once;

-- The steps of this schema applied to the database: each step is applied once, and records
-- itself here in the transaction that applies it (once.Migrate, or a migration oncegen wrote).
CREATE TABLE IF NOT EXISTS once.schema_steps (
	step       bigint      PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE once.schema_steps IS 'once schema steps applied to this database, one row per step: once.Migrate applies the missing ones, once.Verify requires the newest its runtime knows.';

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

-- forever: once for ever (or for a retention window). One row per guard name, scope and key;
-- the row is the promise, and its state says where the promise stands.
CREATE TABLE IF NOT EXISTS once.operations (
	id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name           text        NOT NULL,
	scope          text        NOT NULL DEFAULT '',
	key            text        NOT NULL,
	state          text        NOT NULL DEFAULT 'open',
	token          text        NOT NULL,
	attempts       bigint      NOT NULL DEFAULT 1,
	fingerprint    bytea       NULL,
	provider_ref   uuid        NOT NULL DEFAULT gen_random_uuid(),
	result         json        NULL,
	error          text        NULL,
	recovery_point text        NULL,
	claimed_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
	alive_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
	settled_at     timestamptz NULL,
	expires_at     timestamptz NULL,
	retain         interval    NULL,
	CONSTRAINT operations_state CHECK (state IN ('open', 'done', 'failed', 'released', 'uncertain')),
	CONSTRAINT operations_settled CHECK ((state = 'open') = (settled_at IS NULL)),
	-- Only a settled outcome is forgotten: an open claim has a holder, an uncertain one awaits
	-- an operator, and neither may vanish with the retention window.
	CONSTRAINT operations_expiry CHECK (expires_at IS NULL OR state IN ('done', 'failed', 'released')),
	CONSTRAINT operations_name_scope_key_once_forever UNIQUE (name, scope, key)
);
-- A table made before retain existed gets it here: the schema only grows, and is applied again
-- by every newer runtime.
ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS retain interval NULL;
CREATE INDEX IF NOT EXISTS operations_expires_at ON once.operations (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS operations_attention ON once.operations (name, settled_at) WHERE state = 'uncertain';
COMMENT ON TABLE once.operations IS 'once forever guards and operation references: one row per guard name, scope (account) and key. The insert is the claim; the state column says where the promise stands.';
COMMENT ON COLUMN once.operations.state IS 'open = an attempt holds the claim (alive_at says when it last showed life); done = the effect happened, result holds what it returned; failed = a terminal failure, error is replayed to every retry; released = the last attempt failed in a way that is safe to retry, the next call runs again; uncertain = the effect may or may not have happened (its holder died, or its result was lost): never retried until an operator resolves it.';
COMMENT ON COLUMN once.operations.scope IS 'tenant or account the key belongs to ('''' for none): the same key in two scopes is two operations.';
COMMENT ON COLUMN once.operations.token IS 'proof of the current attempt: settle and checkpoints are conditional on it, so a late or replaced holder changes nothing.';
COMMENT ON COLUMN once.operations.fingerprint IS 'sha256 of the canonical JSON of the input the key was first used with; a reuse with another input is refused.';
COMMENT ON COLUMN once.operations.provider_ref IS 'stable across attempts, new for a new operation: the root of the idempotency keys sent to providers and of follow-ups.';
COMMENT ON COLUMN once.operations.expires_at IS 'when a settled outcome is forgotten (NULL = kept for ever); after it a retry runs as new, and the reaper deletes the row.';
COMMENT ON COLUMN once.operations.retain IS 'how long the guard keeps a settled outcome (NULL = for ever), recorded at every settle, so an operator''s resolution of an uncertain operation is kept as long as the guard would have kept it.';

-- Recovery points: each records that a step of an operation is done, with what it produced,
-- written in the step's own transaction. A retry resumes after the last one.
CREATE TABLE IF NOT EXISTS once.checkpoints (
	operation_id bigint      NOT NULL REFERENCES once.operations (id) ON DELETE CASCADE,
	step         text        NOT NULL,
	state        json        NULL,
	attempt      bigint      NOT NULL,
	recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (operation_id, step)
);
COMMENT ON TABLE once.checkpoints IS 'once recovery points: a step of an operation that is done (committed with the step''s own writes), with its state; a retry of the operation skips it.';

-- The ledger outlives the operations it counts: no foreign key, so reaping an expired
-- operation never deletes what was billed for it.
CREATE TABLE IF NOT EXISTS once.ledger (
	id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	operation_id bigint      NOT NULL,
	operation    text        NOT NULL,
	scope        text        NOT NULL,
	kind         text        NOT NULL,
	unit         text        NOT NULL,
	quantity     bigint      NOT NULL,
	detail       json        NULL,
	recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	CONSTRAINT ledger_operation_id_kind_unit_once_forever UNIQUE (operation_id, kind, unit)
);
CREATE INDEX IF NOT EXISTS ledger_scope_recorded_at ON once.ledger (scope, recorded_at);
COMMENT ON TABLE once.ledger IS 'once ledger: usage and cost entries, each written in the transaction that settles its operation and unique per operation, kind and unit, so no retry, worker or recovery adds a second.';

-- Follow-ups: actions enqueued when an operation settles, delivered at least once by a drain.
CREATE TABLE IF NOT EXISTS once.followups (
	id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	operation_id bigint      NOT NULL,
	operation    text        NOT NULL,
	scope        text        NOT NULL,
	action       text        NOT NULL,
	payload      json        NULL,
	provider_key text        NOT NULL,
	state        text        NOT NULL DEFAULT 'pending',
	attempts     bigint      NOT NULL DEFAULT 0,
	last_error   text        NULL,
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	due_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
	delivered_at timestamptz NULL,
	CONSTRAINT followups_state CHECK (state IN ('pending', 'delivered', 'dead')),
	CONSTRAINT followups_operation_id_action_once_forever UNIQUE (operation_id, action)
);
CREATE INDEX IF NOT EXISTS followups_due ON once.followups (due_at) WHERE state = 'pending';
COMMENT ON TABLE once.followups IS 'once follow-ups: actions (email the owner, export) enqueued in the transaction that settles an operation. pending = to deliver at due_at (attempts so far, last_error); delivered; dead = gave up after the drain''s attempt limit, for an operator.';
