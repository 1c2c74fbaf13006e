package once_test

import (
	"context"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// The guards that do not replay a value take a function that returns only an error. A
// function that returns a value too is called as a generated wrapper calls it: the closure
// keeps the value, and the wrapper returns it with the guard's outcome. These helpers are
// that wrapper, for the tests' functions.

// keyedGuard is a guard called with a DB and a key: Episode, Open, Lease.
type keyedGuard interface {
	Do(ctx context.Context, db once.DB, key string, fn func(context.Context) error) (once.Outcome, error)
}

func doValue[T any](ctx context.Context, g keyedGuard, db once.DB, key string, fn func(context.Context) (T, error)) (T, once.Outcome, error) {
	var v T
	out, err := g.Do(ctx, db, key, keep(&v, fn))
	return v, out, err
}

func stmtValue[T any](ctx context.Context, g once.Statement, db once.DB, key string, n int64, fn func(context.Context) (T, error)) (T, once.Outcome, error) {
	var v T
	out, err := g.Do(ctx, db, key, n, keep(&v, fn))
	return v, out, err
}

func providerValue[T any](ctx context.Context, g once.Provider, key string, fn func(context.Context) (T, error)) (T, once.Outcome, error) {
	var v T
	out, err := g.Do(ctx, key, keep(&v, fn))
	return v, out, err
}

func txValue[T any](ctx context.Context, g once.Transaction, db once.DB, key string, fn func(context.Context, pgx.Tx) (T, error)) (T, once.Outcome, error) {
	var v T
	out, err := g.Do(ctx, db, key, keepTx(&v, fn))
	return v, out, err
}

func tableValue[T any](ctx context.Context, g once.Table, db once.DB, fn func(context.Context, pgx.Tx) (T, error)) (T, once.Outcome, error) {
	var v T
	out, err := g.Do(ctx, db, keepTx(&v, fn))
	return v, out, err
}

// keep returns fn as a function that returns only its error, and keeps its value in v. A nil
// fn stays nil, for the guard to refuse.
func keep[T any](v *T, fn func(context.Context) (T, error)) func(context.Context) error {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context) (err error) { *v, err = fn(ctx); return err }
}

func keepTx[T any](v *T, fn func(context.Context, pgx.Tx) (T, error)) func(context.Context, pgx.Tx) error {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, tx pgx.Tx) (err error) { *v, err = fn(ctx, tx); return err }
}
