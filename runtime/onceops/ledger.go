package onceops

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
	"github.com/oncekit/once/runtime/internal/ledger"
)

// recordLedgerSQL adds ledger entries to the operation $1 (its name, scope and key, $2 to
// $4, find it by its primary key), leaving any it has already.
const recordLedgerSQL = `WITH op AS (
	SELECT id, name, scope, key FROM once.operations WHERE name = $2 AND scope = $3 AND key = $4 AND id = $1::uuid
), added AS (
	INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity, detail)
	SELECT op.id, op.name, op.scope, op.key, e.kind, e.unit, e.quantity, nullif(e.detail, '')::json
	FROM op, unnest($5::text[], $6::text[], $7::bigint[], $8::text[]) AS e(kind, unit, quantity, detail)
	ON CONFLICT (operation_id, kind, unit) DO NOTHING
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM op), (SELECT count(*) FROM added)`

// RecordLedger writes ledger entries for an operation outside its settle: for an operator
// or a reconciliation job that resolves an uncertain operation (op, as ListUncertain or
// Lookup returned it) and knows what it consumed. An entry the operation already has (same
// Kind and Unit) is left as it is. It returns how many entries were added; an operation
// that is gone (or was claimed anew since op was read) is refused with ErrNoOperation.
func RecordLedger(ctx context.Context, db once.DB, op Operation, entries ...once.LedgerEntry) (added int64, err error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	if !dbcall.IsUUID(op.ID) {
		return 0, fmt.Errorf("%w: operation id %q is not a UUID", dbcall.ErrInvalid, op.ID)
	}
	var rows []ledger.Row
	for _, e := range entries {
		r, err := ledger.Encode(e.Kind, e.Unit, e.Quantity, e.Detail)
		if err == nil {
			rows, err = ledger.Add(rows, r)
		}
		if err != nil {
			return 0, fmt.Errorf("operation %s: %w", op.ID, err)
		}
	}
	args := append([]any{op.ID, op.Name, op.Scope, op.Key}, ledger.Columns(rows)...)
	var found bool
	if err := db.QueryRow(ctx, recordLedgerSQL, args...).Scan(&found, &added); err != nil {
		return 0, fmt.Errorf("once: recording ledger entries of operation %s: %w", op.ID, err)
	}
	if !found {
		return 0, fmt.Errorf("%w: %s (%s %q)", ErrNoOperation, op.ID, op.Name, op.Key)
	}
	return added, nil
}
