package once

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Table is the guard of the table= forms, where the promise lives on the caller's own rows:
// the function does the insert itself, with an INSERT .. ON CONFLICT .. RETURNING whose
// conflict clause oncegen generates to match the table's unique index. The insert is the
// check: a row back means this call holds the promise; no row (pgx.ErrNoRows from the
// RETURNING scan) means another call already does.
type Table[T any] struct {
	// Name identifies the guard in errors.
	Name string
	// OnConflict is the status of a call whose insert returned no row: Duplicate for a
	// unique key or a set latch, InFlight for an open row, Refused for a full counter.
	OnConflict Status
}

// Do begins a transaction on db and runs fn with it. If fn returns pgx.ErrNoRows (its
// INSERT .. ON CONFLICT returned no row), the transaction is rolled back, so nothing fn did
// before the insert lasts, and Do returns Outcome{Status: OnConflict} and a nil error. If fn
// returns another error (or panics), the transaction is rolled back and the error returned as
// it is. Otherwise the transaction is committed: Outcome{Status: Ran}.
//
// When db is itself a pgx.Tx, Begin makes a savepoint: the row lasts only if the caller's
// transaction commits.
func (g Table[T]) Do(ctx context.Context, db DB, fn func(context.Context, pgx.Tx) (T, error)) (T, Outcome, error) {
	var zero T
	if err := checkContext(ctx); err != nil {
		return zero, Outcome{}, err
	}
	if err := checkDB(db); err != nil {
		return zero, Outcome{}, err
	}
	if err := checkName(g.Name); err != nil {
		return zero, Outcome{}, err
	}
	if fn == nil {
		return zero, Outcome{}, invalid("table", g.Name, "nil function")
	}
	switch g.OnConflict {
	case Duplicate, InFlight, Refused:
	default:
		return zero, Outcome{}, invalid("table", g.Name, "OnConflict is %v: use Duplicate, InFlight or Refused", g.OnConflict)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return zero, Outcome{}, fmt.Errorf("once: table guard %s: begin: %w", g.Name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after a commit, a no-op
	v, err := fn(ctx, tx)
	if errors.Is(err, pgx.ErrNoRows) {
		if rerr := tx.Rollback(ctx); rerr != nil {
			return zero, Outcome{}, fmt.Errorf("once: table guard %s: rollback: %w", g.Name, rerr)
		}
		return zero, Outcome{Status: g.OnConflict}, nil
	}
	if err != nil {
		return zero, Outcome{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return zero, Outcome{}, fmt.Errorf("once: table guard %s: commit: %w", g.Name, err)
	}
	return v, Outcome{Status: Ran}, nil
}
