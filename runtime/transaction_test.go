package once_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// decideAndInsert is a decision made from a read: it inserts the effect only if it does not
// see one yet. Alone it is the classic check-then-insert race; under the guard's lock it is
// safe.
func decideAndInsert(ctx context.Context, tx pgx.Tx, key string, caller int, between func() error) (bool, error) {
	var seen int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM effects WHERE guard = 'tx' AND key = $1", key).Scan(&seen); err != nil {
		return false, err
	}
	if between != nil {
		if err := between(); err != nil {
			return false, err
		}
	}
	if seen > 0 {
		return false, nil
	}
	return true, effect(ctx, tx, "tx", key, caller)
}

func TestTransaction_ConcurrentDecisionsRunOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	g := once.Transaction{Name: "subscription.Sync"}
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, out, err := txValue(ctx, g, conn, "cus_1", func(ctx context.Context, tx pgx.Tx) (bool, error) {
			return decideAndInsert(ctx, tx, "cus_1", caller, nil)
		})
		if err == nil && out.Status != once.Ran {
			t.Errorf("caller %d: status %v, want ran", caller, out.Status)
		}
		return err
	})
	if n := effects(t, pool, "tx", "cus_1"); n != 1 {
		t.Fatalf("%d effects from %d concurrent decisions, want exactly 1", n, stormSize)
	}
}

// The negative control: the same decision in a transaction without the lock. The barrier
// holds every caller between its read and its write until all have read, so every one of
// them decides to insert.
func TestTransaction_NegativeControl_WithoutTheLockEveryoneDecides(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := decideAndInsert(ctx, tx, "cus_1", caller, func() error { return b.wait(ctx) })
			return err
		})
	})
	if n := effects(t, pool, "tx", "cus_1"); n != stormSize {
		t.Fatalf("%d effects without the lock, want %d (the race this test must be able to see)", n, stormSize)
	}
}

// holdLock takes the guard's lock for key in a transaction of its own and returns the
// function that ends it.
func holdLock(t *testing.T, pool *pgxpool.Pool, name, key string) func() {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", once.LockID(name, key)); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback(ctx) }
}

func TestTransaction_NoWaitAnswersBusy(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	release := holdLock(t, pool, "sync", "k")
	defer release()
	g := once.Transaction{Name: "sync", NoWait: true}
	_, out, err := txValue(context.Background(), g, pool, "k", func(context.Context, pgx.Tx) (int, error) {
		t.Error("ran while the lock was held")
		return 0, nil
	})
	if err != nil || out.Status != once.Busy || !errors.Is(out.Err(), once.ErrBusy) {
		t.Fatalf("got %v, %v; want Busy, no error, and ErrBusy from Outcome.Err", out.Status, err)
	}
	release()
	if _, out, err := txValue(context.Background(), g, pool, "k", func(context.Context, pgx.Tx) (int, error) { return 1, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("after release: %v, %v; want ran", out.Status, err)
	}
}

// A lock held past LockTimeout is an answer, as a held lock with NoWait is: Busy, with no
// error, and the function did not run.
func TestTransaction_LockTimeoutIsBusyAndScopedToTheLock(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Transaction{Name: "sync", LockTimeout: 100 * time.Millisecond}

	release := holdLock(t, pool, "sync", "k")
	start := time.Now()
	_, out, err := txValue(ctx, g, pool, "k", func(context.Context, pgx.Tx) (string, error) {
		t.Error("ran without the lock")
		return "", nil
	})
	if err != nil || out.Status != once.Busy || !errors.Is(out.Err(), once.ErrBusy) {
		t.Fatalf("got %v, %v; want Busy and no error", out.Status, err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("gave up after %v, before the 100ms lock timeout", waited)
	}
	release()

	// Inside fn the session's own lock_timeout is back: the guard's timeout bounds only the
	// guard's lock, not the function's statements.
	setting, out, err := txValue(ctx, g, pool, "k", func(ctx context.Context, tx pgx.Tx) (string, error) {
		var s string
		err := tx.QueryRow(ctx, "SHOW lock_timeout").Scan(&s)
		return s, err
	})
	if err != nil || out.Status != once.Ran {
		t.Fatalf("got %v, %v; want ran", out.Status, err)
	}
	if setting != "0" {
		t.Fatalf("lock_timeout inside the function is %q, want the session's \"0\"", setting)
	}
}

func TestTransaction_WaitsUntilTheContextEnds(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	release := holdLock(t, pool, "sync", "k")
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, _, err := txValue(ctx, (once.Transaction{Name: "sync"}), pool, "k", func(context.Context, pgx.Tx) (int, error) {
		t.Error("ran without the lock")
		return 0, nil
	})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() == nil {
		t.Fatalf("error %v; want the wait ended by the context", err)
	}
}

func TestTransaction_FunctionErrorRollsBack(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	boom := errors.New("boom")
	_, out, err := txValue(context.Background(), (once.Transaction{Name: "sync"}), pool, "k", func(ctx context.Context, tx pgx.Tx) (int, error) {
		if err := effect(ctx, tx, "tx", "k", 1); err != nil {
			return 0, err
		}
		return 0, boom
	})
	if !errors.Is(err, boom) || out.Status != once.Ran {
		t.Fatalf("got %v, %v; want the function's error", out.Status, err)
	}
	if n := effects(t, pool, "tx", "k"); n != 0 {
		t.Fatalf("%d effects survived the rollback", n)
	}
}

// Inside a caller's transaction, Begin makes a savepoint: the lock belongs to the outer
// transaction and is held until it ends, not until Do returns. A failed function's savepoint
// is rolled back, and the lock with it.
func TestTransaction_InsideATransactionTheLockLastsUntilTheOuterCommit(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	tryLock := func(key string) bool {
		var got bool
		// pg_try_advisory_xact_lock in its own implicit transaction: released at once.
		if err := pool.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", once.LockID("sync", key)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	outer, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Rollback(ctx)
	g := once.Transaction{Name: "sync"}
	if _, _, err := txValue(ctx, g, outer, "held", func(context.Context, pgx.Tx) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if tryLock("held") {
		t.Fatal("the lock was free after Do returned, with the outer transaction still open")
	}
	txValue(ctx, g, outer, "failed", func(context.Context, pgx.Tx) (int, error) { return 0, errors.New("boom") })
	if !tryLock("failed") {
		t.Fatal("the lock of a failed function's savepoint is still held")
	}
	if err := outer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !tryLock("held") {
		t.Fatal("the lock outlived the outer commit")
	}
}
