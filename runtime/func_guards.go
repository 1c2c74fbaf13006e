package once

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The guards of a function that returns only an error. Each is its generic guard for no
// value, under a name of its own (as sync.OnceFunc stands beside sync.OnceValue): the same
// fields, the same promise and the same rows, with Do taking func(context.Context) error and
// returning only the Outcome and the error. A guard whose function returns a value is the
// generic one: Forever[Receipt].
//
//	out, err := once.LeaseFunc{Name: "ideas.Generate", TTL: time.Minute}.Do(ctx, pool, key, generate)
//
// A ForeverFunc records its outcome as Forever[struct{}] does, so the two replay each other's.

// noValue adapts a function that returns only an error to a generic guard's function.
func noValue(fn func(context.Context) error) func(context.Context) (struct{}, error) {
	if fn == nil {
		return nil // the guard refuses a nil function, as it would fn
	}
	return func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }
}

// noValueTx is noValue for a function that runs in the guard's transaction.
func noValueTx(fn func(context.Context, pgx.Tx) error) func(context.Context, pgx.Tx) (struct{}, error) {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, tx pgx.Tx) (struct{}, error) { return struct{}{}, fn(ctx, tx) }
}

// RequestFunc is a Request guard for a function that returns only an error.
type RequestFunc Request[struct{}]

// Do is Request.Do for a function that returns only an error.
func (g RequestFunc) Do(ctx context.Context, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Request[struct{}](g).Do(ctx, key, noValue(fn))
	return out, err
}

// TransactionFunc is a Transaction guard for a function that returns only an error.
type TransactionFunc Transaction[struct{}]

// Do is Transaction.Do for a function that returns only an error.
func (g TransactionFunc) Do(ctx context.Context, db DB, key string, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	_, out, err := Transaction[struct{}](g).Do(ctx, db, key, noValueTx(fn))
	return out, err
}

// StatementFunc is a Statement guard for a function that returns only an error.
type StatementFunc Statement[struct{}]

// Do is Statement.Do for a function that returns only an error.
func (g StatementFunc) Do(ctx context.Context, db DB, key string, n int64, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Statement[struct{}](g).Do(ctx, db, key, n, noValue(fn))
	return out, err
}

// Reserve is Statement.Reserve.
func (g StatementFunc) Reserve(ctx context.Context, db DB, key string, n int64) (used int64, ok bool, err error) {
	return Statement[struct{}](g).Reserve(ctx, db, key, n)
}

// Refund is Statement.Refund.
func (g StatementFunc) Refund(ctx context.Context, db DB, key string, n int64) error {
	return Statement[struct{}](g).Refund(ctx, db, key, n)
}

// EpisodeFunc is an Episode guard for a function that returns only an error.
type EpisodeFunc Episode[struct{}]

// Do is Episode.Do for a function that returns only an error.
func (g EpisodeFunc) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Episode[struct{}](g).Do(ctx, db, key, noValue(fn))
	return out, err
}

// Rearm is Episode.Rearm.
func (g EpisodeFunc) Rearm(ctx context.Context, db DB, key string) (rearmed bool, err error) {
	return Episode[struct{}](g).Rearm(ctx, db, key)
}

// OpenFunc is an Open guard for a function that returns only an error.
type OpenFunc Open[struct{}]

// Do is Open.Do for a function that returns only an error.
func (g OpenFunc) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Open[struct{}](g).Do(ctx, db, key, noValue(fn))
	return out, err
}

// Claim is Open.Claim.
func (g OpenFunc) Claim(ctx context.Context, db DB, key string) (*Claim, Outcome, error) {
	return Open[struct{}](g).Claim(ctx, db, key)
}

// LeaseFunc is a Lease guard for a function that returns only an error.
type LeaseFunc Lease[struct{}]

// Do is Lease.Do for a function that returns only an error.
func (g LeaseFunc) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Lease[struct{}](g).Do(ctx, db, key, noValue(fn))
	return out, err
}

// Acquire is Lease.Acquire.
func (g LeaseFunc) Acquire(ctx context.Context, db DB, key string) (*Held, error) {
	return Lease[struct{}](g).Acquire(ctx, db, key)
}

// ForeverFunc is a Forever guard for a function that returns only an error.
type ForeverFunc Forever[struct{}]

// Do is Forever.Do for a function that returns only an error.
func (g ForeverFunc) Do(ctx context.Context, db DB, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Forever[struct{}](g).Do(ctx, db, key, noValue(fn))
	return out, err
}

// DoRef is Forever.DoRef for a function that returns only an error.
func (g ForeverFunc) DoRef(ctx context.Context, db DB, ref Ref, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Forever[struct{}](g).DoRef(ctx, db, ref, noValue(fn))
	return out, err
}

// OperationFunc is an Operation for a function that returns only an error.
type OperationFunc Operation[struct{}]

// Do is Operation.Do for a function that returns only an error.
func (op OperationFunc) Do(ctx context.Context, db DB, ref OperationRef, fn func(context.Context, *Attempt) error) (Outcome, error) {
	var inner func(context.Context, *Attempt) (struct{}, error)
	if fn != nil {
		inner = func(ctx context.Context, a *Attempt) (struct{}, error) { return struct{}{}, fn(ctx, a) }
	}
	_, out, err := Operation[struct{}](op).Do(ctx, db, ref, inner)
	return out, err
}

// Lookup is Operation.Lookup.
func (op OperationFunc) Lookup(ctx context.Context, db DB, account, reference string) (OperationRecord, error) {
	return Operation[struct{}](op).Lookup(ctx, db, account, reference)
}

// ProviderFunc is a Provider guard for a function that returns only an error.
type ProviderFunc Provider[struct{}]

// Do is Provider.Do for a function that returns only an error.
func (g ProviderFunc) Do(ctx context.Context, key string, fn func(context.Context) error) (Outcome, error) {
	_, out, err := Provider[struct{}](g).Do(ctx, key, noValue(fn))
	return out, err
}

// TableFunc is a Table guard for a function that returns only an error.
type TableFunc Table[struct{}]

// Do is Table.Do for a function that returns only an error.
func (g TableFunc) Do(ctx context.Context, db DB, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	_, out, err := Table[struct{}](g).Do(ctx, db, noValueTx(fn))
	return out, err
}
