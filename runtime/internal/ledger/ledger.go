// Package ledger checks and encodes ledger entries (once.ledger) as both of their writers
// need them: an attempt's settle (once.Attempt.Record) and an operator's record of an
// operation resolved by hand (onceops.RecordLedger).
package ledger

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// maxText bounds Kind and Unit, which are names, not data.
const maxText = 128

// Row is an entry checked, with its detail encoded as JSON ("" for none).
type Row struct {
	Kind, Unit string
	Quantity   int64
	Detail     string
}

// Encode checks an entry's kind and unit and encodes its detail.
func Encode(kind, unit string, quantity int64, detail any) (Row, error) {
	for _, f := range []struct{ what, v string }{{"kind", kind}, {"unit", unit}} {
		if f.v == "" || len(f.v) > maxText || !utf8.ValidString(f.v) {
			return Row{}, fmt.Errorf("%w: ledger entry %s %q must be 1 to %d bytes of UTF-8", dbcall.ErrInvalid, f.what, f.v, maxText)
		}
	}
	r := Row{Kind: kind, Unit: unit, Quantity: quantity}
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return Row{}, fmt.Errorf("%w: ledger entry %s/%s: detail: %v", dbcall.ErrInvalid, kind, unit, err)
		}
		r.Detail = string(b)
	}
	return r, nil
}

// Add appends r to rows, refusing a second entry of the same kind and unit: the ledger keeps
// one per operation.
func Add(rows []Row, r Row) ([]Row, error) {
	for _, old := range rows {
		if old.Kind == r.Kind && old.Unit == r.Unit {
			return rows, fmt.Errorf("%w: ledger entry %s/%s given twice", dbcall.ErrInvalid, r.Kind, r.Unit)
		}
	}
	return append(rows, r), nil
}

// Columns turns rows into the four arrays a statement unnests: kinds, units, quantities,
// details.
func Columns(rows []Row) []any {
	kinds := make([]string, len(rows))
	units := make([]string, len(rows))
	qty := make([]int64, len(rows))
	details := make([]string, len(rows))
	for i, r := range rows {
		kinds[i], units[i], qty[i], details[i] = r.Kind, r.Unit, r.Quantity, r.Detail
	}
	return []any{kinds, units, qty, details}
}
