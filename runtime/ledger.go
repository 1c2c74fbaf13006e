package once

import (
	"fmt"

	"github.com/oncekit/once/runtime/internal/ledger"
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

// Record adds ledger entries to write when the attempt settles done or failed (a terminal
// failure can still have cost something). Entries of a released or uncertain attempt are
// not written: the work was not delivered, or nobody knows whether it was; an operator who
// resolves it can record them with onceops.RecordLedger. An entry whose Kind and Unit this
// attempt already recorded is refused with ErrInvalid, and then none of entries is added.
func (a *Attempt) Record(entries ...LedgerEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	rows := a.ledger
	for _, e := range entries {
		r, err := ledger.Encode(e.Kind, e.Unit, e.Quantity, e.Detail)
		if err == nil {
			rows, err = ledger.Add(rows, r)
		}
		if err != nil {
			return fmt.Errorf("operation %s: %w", a.id, err)
		}
	}
	a.ledger = rows
	return nil
}

// ledgerColumns turns rows into the four arrays the settle statement unnests.
func ledgerColumns(rows []ledger.Row) []any { return ledger.Columns(rows) }
