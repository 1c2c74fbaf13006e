package oncetest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/memstore"
)

// ErrNoSQL is the error Memory's stand-in answers every statement with, and the error a
// guard it cannot serve wraps (match it with errors.Is): the stand-in keeps the guards'
// state in memory and runs no SQL.
var ErrNoSQL = memstore.ErrNoSQL

// Memory returns an in-memory stand-in for a once.DB, for unit tests of code around a guard:
// a service function that calls a generated wrapper, tested without PostgreSQL. It is
// process-local and forgets everything when it is dropped: never use it in production, where
// a promise is only as good as the database that keeps it.
//
// The guards that keep their state in once's tables keep it in the stand-in instead, with
// what a caller observes against PostgreSQL: the same Outcome and error for the same calls,
// duplicates replaying the recorded value or failure, in-flight and busy answers, stale
// claims and expired leases and outcomes (by the local clock). It serves Forever (and
// ForeverValue, Attempt.Heartbeat), Statement, Episode, Open (with Claim and its methods)
// and Lease; Request and Provider take no DB at all. It stands in for a *pgxpool.Pool: the
// automatic heartbeat of Forever and Open runs on it, and their default stale window is a
// pool's.
//
// It runs no SQL. Its Begin, Exec, Query and QueryRow return ErrNoSQL, and so do the guards
// whose function works in a transaction on the caller's database, which a stand-in cannot
// give: Transaction, Table (the table= forms), checkpoints (Attempt.Checkpoint, Step). A test
// of those, of the operator tools (onceops), of Verify or of the app's own SQL uses DB.
// Ledger entries and follow-ups a function records are not kept: only onceops reads them.
// Calls answered without running are not counted (once.FlushDuplicates writes nothing on
// it): the count is the operator console's, and the stand-in has no console.
//
// Each call returns a new, empty stand-in, safe for concurrent use.
func Memory() once.DB { return &memoryDB{store: memstore.New()} }

// memoryDB is the stand-in: the guards find its store through memstore.Holder.
type memoryDB struct{ store *memstore.Store }

// MemoryStore returns the stand-in's state, for the guards.
func (m *memoryDB) MemoryStore() *memstore.Store { return m.store }

func noSQL(method string) error {
	return fmt.Errorf("%w (%s called)", ErrNoSQL, method)
}

// Begin refuses: the stand-in has no transactions.
func (m *memoryDB) Begin(context.Context) (pgx.Tx, error) { return nil, noSQL("Begin") }

// Exec refuses: the stand-in runs no SQL.
func (m *memoryDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, noSQL("Exec")
}

// Query refuses: the stand-in runs no SQL.
func (m *memoryDB) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, noSQL("Query")
}

// QueryRow returns a row whose Scan refuses: the stand-in runs no SQL.
func (m *memoryDB) QueryRow(context.Context, string, ...any) pgx.Row { return noRow{noSQL("QueryRow")} }

type noRow struct{ err error }

func (r noRow) Scan(...any) error { return r.err }
