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
	attempts     integer     NOT NULL DEFAULT 0,
	last_error   text        NULL,
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	due_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
	delivered_at timestamptz NULL,
	CONSTRAINT followups_state CHECK (state IN ('pending', 'delivered', 'dead')),
	CONSTRAINT followups_operation_id_action_once_forever UNIQUE (operation_id, action)
);
CREATE INDEX IF NOT EXISTS followups_due ON once.followups (due_at) WHERE state = 'pending';
COMMENT ON TABLE once.followups IS 'once follow-ups: actions (email the owner, export) enqueued in the transaction that settles an operation. pending = to deliver at due_at (attempts so far, last_error); delivered; dead = gave up after the drain''s attempt limit, for an operator.';
