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
