package once

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ConflictError is ErrConflict naming the row that holds the promise (errors.Is(err,
// ErrConflict) holds for it).
type ConflictError struct {
	// Handle names the row, as Table.Do reports it in Outcome.Holder.
	Handle string
}

// Error says that the insert met the row named by Handle.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v (held by %s)", ErrConflict, e.Handle)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Conflict returns ErrConflict naming the row that holds the promise, for Table.Do to report
// in Outcome.Holder. The open form's function uses it to name the open row, so a duplicate
// caller can redirect to the work in flight: after its INSERT .. ON CONFLICT returned no row,
// a SELECT of the open row by its key, in the same transaction, sees it (the insert waited for
// that row's transaction to commit).
func Conflict(handle string) error { return &ConflictError{Handle: handle} }

// InsertConflict turns the error of the scan of an INSERT .. ON CONFLICT .. RETURNING into
// the table guard's signal: pgx.ErrNoRows (the conflict clause let no row through) becomes
// ErrConflict; nil and any other error are returned as they are. It belongs on the insert's
// scan only, so that a SELECT finding nothing elsewhere in the function stays an error:
//
//	err := tx.QueryRow(ctx, `INSERT INTO jobs (dedupe_key) VALUES ($1) `+EnqueueConflict+` RETURNING id`, key).Scan(&id)
//	return id, once.InsertConflict(err)
func InsertConflict(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrConflict
	}
	return err
}

// Table is the guard of the table= forms, where the promise lives on the caller's own rows:
// the function does the insert itself, with an INSERT .. ON CONFLICT .. RETURNING whose
// conflict clause oncegen generates to match the table's unique index. The insert is the
// check: a row back means this call holds the promise; no row means another call already
// does, which the function reports by returning ErrConflict (see InsertConflict and
// Conflict).
type Table struct {
	// Name identifies the guard in errors.
	Name string
	// OnConflict is the status of a call whose insert returned no row: Duplicate for a
	// unique key or a set latch, InFlight for an open row, Refused for a full counter.
	OnConflict Status
	// CapCheck names the CHECK constraint that bounds a statement form's counter by its cap
	// (oncegen's <table>_<counter>_once_cap). The conflict clause compares only an existing
	// row's counter with the cap; a key's first insert creates its row and is compared by
	// this constraint. An insert that violates it is refused like a full counter: Outcome
	// Refused, no error, the transaction rolled back.
	CapCheck string
}

// Do begins a transaction on db and runs fn with it. If fn returns ErrConflict, the
// transaction is rolled back, so nothing fn did before the insert lasts, and Do returns
// Outcome{Status: OnConflict, Holder: the ConflictError's handle, if any} and a nil error.
// If fn returns the violation of CapCheck, the same, with Outcome{Status: Refused}.
// If fn returns another error (or panics), the transaction is rolled back and the error
// returned; pgx.ErrNoRows among them, since a SELECT finding nothing is not a conflict: the
// error then says to mark the insert's own no-row with InsertConflict. Otherwise the
// transaction is committed: Outcome{Status: Ran}.
//
// When db is itself a pgx.Tx, Begin makes a savepoint: the row lasts only if the caller's
// transaction commits.
func (g Table) Do(ctx context.Context, db DB, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	if err := dbcall.Name(g.Name); err != nil {
		return Outcome{}, err
	}
	if err := checkGuardHandle(ctx, db, "table", g.Name); err != nil {
		return Outcome{}, err
	}
	if fn == nil {
		return Outcome{}, invalid("table", g.Name, "nil function")
	}
	switch g.OnConflict {
	case Duplicate, InFlight, Refused:
	default:
		return Outcome{}, invalid("table", g.Name, "OnConflict is %v: use Duplicate, InFlight or Refused", g.OnConflict)
	}
	if memoryOf(db) != nil {
		return Outcome{}, memoryRefused("table", g.Name, "its function inserts into the caller's own table, in a transaction")
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("once: table guard %s: begin: %w", g.Name, err)
	}
	defer func() {
		rctx, cancel := dbcall.SettleContext(ctx)
		defer cancel()
		tx.Rollback(rctx) // after a commit, a no-op
	}()
	err = fn(ctx, tx)
	var refused Outcome
	switch {
	case errors.Is(err, ErrConflict):
		refused.Status = g.OnConflict
		var ce *ConflictError
		if errors.As(err, &ce) {
			refused.Holder = ce.Handle
		}
	case g.overCap(err):
		refused.Status = Refused
	}
	if refused.Status != 0 {
		if rerr := tx.Rollback(ctx); rerr != nil {
			return Outcome{}, fmt.Errorf("once: table guard %s: rollback: %w", g.Name, rerr)
		}
		countAnswered(db, "table", g.Name, refused.Status)
		return refused, nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return Outcome{}, fmt.Errorf("once: table guard %s: %w (if the INSERT .. ON CONFLICT returned no row, return once.InsertConflict(err) from it: any other no-row is an error)", g.Name, err)
	}
	if err != nil {
		return Outcome{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Outcome{}, fmt.Errorf("once: table guard %s: commit: %w", g.Name, err)
	}
	return Outcome{Status: Ran}, nil
}

// checkViolation is PostgreSQL's SQLSTATE for a row that fails a CHECK constraint.
const checkViolation = "23514"

// overCap reports whether err is the violation of the guard's CapCheck: an insert of more
// units than the cap.
func (g Table) overCap(err error) bool {
	var pe *pgconn.PgError
	return g.CapCheck != "" && errors.As(err, &pe) && pe.Code == checkViolation && pe.ConstraintName == g.CapCheck
}
