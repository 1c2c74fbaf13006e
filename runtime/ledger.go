package once

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// LedgerEntry is a usage or cost entry of an operation: one report deducted from an
// allowance, the tokens a model call consumed, what a provider charged. Entries are written
// in the statement that settles the operation and are unique per operation, Kind and Unit
// (once.ledger), so no retry, second worker or recovery can count the same work twice.
type LedgerEntry struct {
	// Kind says what is counted: "usage", "cost".
	Kind string
	// Unit is what Quantity counts: "report", "token", "usd_micros".
	Unit string
	// Quantity is how many units; it may be negative (a credit).
	Quantity int64
	// Detail, when non-nil, is stored as JSON beside the entry (the provider's job id, the
	// model name).
	Detail any
}

// maxLedgerText bounds Kind and Unit, which are names, not data.
const maxLedgerText = 128

// Record adds ledger entries to write when the attempt settles done or failed (a terminal
// failure can still have cost something). Entries of a released or uncertain attempt are
// not written: the work was not delivered, or nobody knows whether it was; an operator who
// resolves it can record them with RecordLedger. An entry whose Kind and Unit this attempt
// already recorded is refused with ErrInvalid, and then none of entries is added.
func (a *Attempt) Record(entries ...LedgerEntry) error {
	rows, err := encodeLedger(entries)
	if err != nil {
		return fmt.Errorf("operation %d: %w", a.id, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range rows {
		for _, old := range a.ledger {
			if old.kind == r.kind && old.unit == r.unit {
				return fmt.Errorf("%w: operation %d: ledger entry %s/%s recorded twice", ErrInvalid, a.id, r.kind, r.unit)
			}
		}
	}
	a.ledger = append(a.ledger, rows...)
	return nil
}

// ledgerRow is an entry checked, with its detail encoded as JSON ("" for none).
type ledgerRow struct {
	kind, unit string
	quantity   int64
	detail     string
}

// encodeLedger checks entries and encodes their details. Two entries with the same Kind and
// Unit are refused: the ledger keeps one per operation.
func encodeLedger(entries []LedgerEntry) ([]ledgerRow, error) {
	rows := make([]ledgerRow, 0, len(entries))
	for _, e := range entries {
		for _, f := range []struct{ what, v string }{{"kind", e.Kind}, {"unit", e.Unit}} {
			if f.v == "" || len(f.v) > maxLedgerText || !utf8.ValidString(f.v) {
				return nil, fmt.Errorf("%w: ledger entry %s %q must be 1 to %d bytes of UTF-8", ErrInvalid, f.what, f.v, maxLedgerText)
			}
		}
		r := ledgerRow{kind: e.Kind, unit: e.Unit, quantity: e.Quantity}
		if e.Detail != nil {
			b, err := json.Marshal(e.Detail)
			if err != nil {
				return nil, fmt.Errorf("%w: ledger entry %s/%s: detail: %v", ErrInvalid, e.Kind, e.Unit, err)
			}
			r.detail = string(b)
		}
		for _, other := range rows {
			if other.kind == r.kind && other.unit == r.unit {
				return nil, fmt.Errorf("%w: ledger entry %s/%s given twice", ErrInvalid, r.kind, r.unit)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ledgerColumns turns rows into the four arrays the settle statement unnests: kinds, units,
// quantities, details.
func ledgerColumns(rows []ledgerRow) []any {
	kinds := make([]string, len(rows))
	units := make([]string, len(rows))
	qty := make([]int64, len(rows))
	details := make([]string, len(rows))
	for i, r := range rows {
		kinds[i], units[i], qty[i], details[i] = r.kind, r.unit, r.quantity, r.detail
	}
	return []any{kinds, units, qty, details}
}

// RecordLedger writes ledger entries for an operation outside its settle: for an operator
// or a reconciliation job that resolves an uncertain operation and knows what it consumed.
// An entry the operation already has (same Kind and Unit) is left as it is. It returns how
// many entries were added; an unknown operation is refused with ErrNoOperation.
func RecordLedger(ctx context.Context, db DB, operationID int64, entries ...LedgerEntry) (added int64, err error) {
	if err := checkContextDB(ctx, db); err != nil {
		return 0, err
	}
	rows, err := encodeLedger(entries)
	if err != nil {
		return 0, fmt.Errorf("operation %d: %w", operationID, err)
	}
	cols := ledgerColumns(rows)
	var found bool
	err = db.QueryRow(ctx, `WITH op AS (SELECT id, name, scope FROM once.operations WHERE id = $1),
added AS (
	INSERT INTO once.ledger (operation_id, operation, scope, kind, unit, quantity, detail)
	SELECT op.id, op.name, op.scope, e.kind, e.unit, e.quantity, nullif(e.detail, '')::json
	FROM op, unnest($2::text[], $3::text[], $4::bigint[], $5::text[]) AS e(kind, unit, quantity, detail)
	ON CONFLICT (operation_id, kind, unit) DO NOTHING
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM op), (SELECT count(*) FROM added)`, append([]any{operationID}, cols...)...).Scan(&found, &added)
	if err != nil {
		return 0, fmt.Errorf("once: recording ledger entries of operation %d: %w", operationID, err)
	}
	if !found {
		return 0, fmt.Errorf("%w: %d", ErrNoOperation, operationID)
	}
	return added, nil
}
