package once

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// Transaction is the promise "once per decision made from a read": the function reads, decides
// and writes in one transaction, and no other caller with the same key can make the same
// decision at the same time, because both would read the state before either wrote. It holds
// a transaction-scoped advisory lock, numbered by LockID(Name, key), from the lock to the end
// of the transaction.
//
// It is the right tool when the decision depends on what the function reads (a limit
// computed from several rows, a subscription's current state). It is the wrong tool for
// plain uniqueness: a storm on one key queues up behind the lock one transaction at a time,
// where a unique claim (Open, Statement, Episode) answers every duplicate at once.
type Transaction struct {
	// Name is the lock's namespace: keys of different guards never share a lock.
	Name string
	// NoWait makes a held lock an answer rather than a wait: Do returns Outcome{Status: Busy}
	// and a nil error at once (pg_try_advisory_xact_lock).
	NoWait bool
	// LockTimeout bounds the wait for the lock; past it Do returns Outcome{Status: Busy} and
	// a nil error. Zero waits until ctx ends. It applies to taking the lock only: the
	// function's own statements run under the session's setting.
	LockTimeout time.Duration
	// IsoLevel is the transaction's isolation level; empty means the database's default (READ
	// COMMITTED unless configured). Serializable makes PostgreSQL refuse, with a serialization
	// failure, a decision that another transaction's concurrent writes would make wrong. It
	// cannot be set when db is itself a transaction.
	IsoLevel pgx.TxIsoLevel
	// Retries is how many more times Do runs the whole transaction (begin, lock, fn, commit)
	// after a retryable failure (ErrRetryable: a serialization failure, a deadlock, a lost
	// connection before the commit was sent), pausing 10 ms, 20 ms, 40 ms... (each drawn at
	// random from its upper half) between runs. fn must be safe to run again: everything it
	// wrote in the failed run was rolled back. Zero runs it once. A lost commit is never
	// retried (it may have committed), nor is a Do inside the caller's transaction (the
	// failure aborted that transaction too).
	Retries int
}

// Do begins a transaction on db, takes the key's lock, runs fn with the transaction and
// commits; if fn returns an error (or panics) the transaction is rolled back and fn's error
// returned as it is. The lock is released by the commit or rollback. Outcome.LockID is the
// lock's number, LockID(Name, key), in decimal (pg_locks shows it as classid and objid, its
// high and low 32 bits). A lock held by another transaction, with NoWait or past
// LockTimeout, is Outcome{Status: Busy} and a nil error: fn did not run.
//
// When db is itself a pgx.Tx, Begin makes a savepoint, and the lock is the outer
// transaction's: it is held until the outer transaction commits or rolls back, not until
// Do returns, so keep such a transaction short. If fn fails, the savepoint is rolled back
// and the lock taken inside it goes with it.
func (g Transaction) Do(ctx context.Context, db DB, key string, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	if err := checkGuardCall(ctx, db, "transaction", g.Name, key); err != nil {
		return Outcome{}, err
	}
	switch {
	case fn == nil:
		return Outcome{}, invalid("transaction", g.Name, "nil function")
	case g.LockTimeout < 0:
		return Outcome{}, invalid("transaction", g.Name, "negative lock timeout %v", g.LockTimeout)
	case g.NoWait && g.LockTimeout > 0:
		return Outcome{}, invalid("transaction", g.Name, "NoWait and LockTimeout both set: choose one")
	}
	if memoryOf(db) != nil {
		return Outcome{}, memoryRefused("transaction", g.Name, "its function reads and writes in a transaction holding an advisory lock")
	}
	lockID := LockID(g.Name, key)
	_, inTx := db.(pgx.Tx)
	switch {
	case g.Retries < 0:
		return Outcome{}, invalid("transaction", g.Name, "negative Retries %d", g.Retries)
	case g.IsoLevel != "" && inTx:
		return Outcome{}, invalid("transaction", g.Name, "IsoLevel %s cannot be set inside the caller's transaction", g.IsoLevel)
	}
	pause := 10 * time.Millisecond
	for run := 0; ; run++ {
		out, err := g.run(ctx, db, lockID, fn)
		if err == nil || run >= g.Retries || inTx || !errors.Is(err, ErrRetryable) {
			return out, err
		}
		t := time.NewTimer(pause/2 + rand.N(pause/2))
		select {
		case <-ctx.Done():
			t.Stop()
			return out, err
		case <-t.C:
		}
		pause *= 2
	}
}

// run is one run of Do: begin, lock, fn, commit. Its error is ErrRetryable when the
// transaction failed for a transient reason and did not commit.
func (g Transaction) run(ctx context.Context, db DB, lockID int64, fn func(context.Context, pgx.Tx) error) (Outcome, error) {
	out := Outcome{LockID: lockID}
	var tx pgx.Tx
	var err error
	if b, ok := db.(txBeginner); ok && g.IsoLevel != "" {
		tx, err = b.BeginTx(ctx, pgx.TxOptions{IsoLevel: g.IsoLevel})
	} else {
		tx, err = db.Begin(ctx)
	}
	if err != nil {
		return Outcome{}, classify(fmt.Errorf("once: transaction guard %s: begin: %w", g.Name, err))
	}
	committed := false
	defer func() {
		if !committed {
			rctx, cancel := dbcall.SettleContext(ctx)
			defer cancel()
			tx.Rollback(rctx)
		}
	}()

	if c := tx.Conn(); c != nil {
		if err := checkServer("transaction", g.Name, c.PgConn()); err != nil {
			return Outcome{}, err
		}
	}
	got, err := g.lock(ctx, tx, lockID)
	if err != nil {
		return Outcome{}, classify(err)
	}
	if !got {
		out.Status = Busy
		countAnswered(db, "transaction", g.Name, Busy)
		return out, nil
	}
	out.Status = Ran
	if err := fn(ctx, tx); err != nil {
		return out, classify(err) // rolled back: a transient failure may be run again
	}
	if err := tx.Commit(ctx); err != nil {
		return out, classifyAnswered(fmt.Errorf("once: transaction guard %s: commit: %w", g.Name, err))
	}
	committed = true
	return out, nil
}

// txBeginner is the part of a pool or connection that begins a transaction with options.
type txBeginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// lockTimeoutSQL takes the lock with a lock_timeout that applies to this statement only. The
// setting's old value is read first and put back after the lock is held, all in one round
// trip: each MATERIALIZED step runs to completion before the step that reads from it, so
// the order old value → set → lock → restore is fixed by the plan, not left to the order
// in which a select list happens to be evaluated. If the lock times out, the error aborts
// the transaction (or savepoint), which undoes the set_config with it.
const lockTimeoutSQL = `WITH old AS MATERIALIZED (SELECT current_setting('lock_timeout') AS timeout),
set AS MATERIALIZED (SELECT set_config('lock_timeout', $2, true) FROM old),
locked AS MATERIALIZED (SELECT pg_advisory_xact_lock($1) FROM set)
SELECT set_config('lock_timeout', old.timeout, true) FROM locked, old`

// lock takes the key's lock in tx, and reports whether it got it: false when another
// transaction holds it and the guard does not wait (NoWait), or did not get it within its
// LockTimeout.
func (g Transaction) lock(ctx context.Context, tx pgx.Tx, lockID int64) (bool, error) {
	switch {
	case g.NoWait:
		var got bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", lockID).Scan(&got); err != nil {
			return false, fmt.Errorf("once: transaction guard %s: try lock: %w", g.Name, err)
		}
		return got, nil
	case g.LockTimeout > 0:
		ms := (g.LockTimeout + time.Millisecond - 1) / time.Millisecond // lock_timeout's unit; round up so 1µs is not "no timeout"
		var restored string
		err := tx.QueryRow(ctx, lockTimeoutSQL, lockID, strconv.FormatInt(int64(ms), 10)+"ms").Scan(&restored)
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "55P03" {
			return false, nil // lock_not_available: held for all of LockTimeout
		}
		if err != nil {
			return false, fmt.Errorf("once: transaction guard %s: lock: %w", g.Name, err)
		}
		return true, nil
	default:
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
			return false, fmt.Errorf("once: transaction guard %s: lock: %w", g.Name, err)
		}
		return true, nil
	}
}
