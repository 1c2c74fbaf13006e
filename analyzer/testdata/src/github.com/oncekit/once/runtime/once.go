// Package once is a stub of once's runtime for oncelint's tests: the guard types and
// provider-key helpers oncelint recognises, with no behaviour.
package once

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type Status uint8

type Outcome struct{ Status Status }

type Forever[T any] struct{ Name string }

func (g Forever[T]) Do(ctx context.Context, db DB, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	v, err := fn(ctx)
	return v, Outcome{}, err
}

type Request[T any] struct{ Name string }

func (g Request[T]) Do(ctx context.Context, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	v, err := fn(ctx)
	return v, Outcome{}, err
}

type RequestFunc Request[struct{}]

func (g RequestFunc) Do(ctx context.Context, key string, fn func(context.Context) error) (Outcome, error) {
	return Outcome{}, fn(ctx)
}

type Provider[T any] struct {
	Name   string
	Prefix string
}

func (g Provider[T]) Do(ctx context.Context, key string, fn func(context.Context) (T, error)) (T, Outcome, error) {
	v, err := fn(ctx)
	return v, Outcome{}, err
}

// ProviderKeyFrom returns the provider idempotency key a provider guard put in ctx.
func ProviderKeyFrom(ctx context.Context) string { return "" }

// ProviderKey derives a provider idempotency key from a prefix and a key.
func ProviderKey(prefix, key string) string { return prefix + "-" + key }

func MustKey(parts ...any) string { return "" }

func Key(parts ...any) (string, error) { return "", nil }

func WithRequestScope(ctx context.Context) context.Context { return ctx }

// Table keeps its promise on the caller's own table, in the transaction it begins.
type Table struct{ Name string }

func (g Table) Do(ctx context.Context, db DB, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	return Outcome{}, fn(ctx, nil)
}
