-- Recovery points: each records that a step of an operation is done, with what it produced,
-- written in the step's own transaction. A retry resumes after the last one.
CREATE TABLE IF NOT EXISTS once.checkpoints (
	operation_id bigint      NOT NULL REFERENCES once.operations (id) ON DELETE CASCADE,
	step         text        NOT NULL,
	state        json        NULL,
	attempt      integer     NOT NULL,
	recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (operation_id, step)
);
COMMENT ON TABLE once.checkpoints IS 'once recovery points: a step of an operation that is done (committed with the step''s own writes), with its state; a retry of the operation skips it.';
