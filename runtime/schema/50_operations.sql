-- forever: once for ever (or for a retention window). One row per guard name, scope and key;
-- the row is the promise, and its state says where the promise stands.
CREATE TABLE IF NOT EXISTS once.operations (
	id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name           text        NOT NULL,
	scope          text        NOT NULL DEFAULT '',
	key            text        NOT NULL,
	state          text        NOT NULL DEFAULT 'open',
	token          text        NOT NULL,
	attempts       integer     NOT NULL DEFAULT 1,
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
