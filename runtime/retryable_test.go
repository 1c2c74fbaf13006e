package once_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	once "github.com/oncekit/once/runtime"
)

// lastSeat is a decision made from a read, under SERIALIZABLE: book a seat only if none is
// booked yet. Two keys (two customers) do not share a lock, so two first runs read together
// (the barrier holds both between the read and the write) and PostgreSQL refuses one commit
// with a serialization failure (40001).
func lastSeat(b *barrier, firstRuns *atomic.Int32, runs *atomic.Int32, caller int) func(context.Context, pgx.Tx) (bool, error) {
	return func(ctx context.Context, tx pgx.Tx) (bool, error) {
		runs.Add(1)
		var booked int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM effects WHERE guard = 'seat'").Scan(&booked); err != nil {
			return false, err
		}
		if firstRuns.Add(1) <= 2 {
			if err := b.wait(ctx); err != nil {
				return false, err
			}
		}
		if booked > 0 {
			return false, nil
		}
		return true, effect(ctx, tx, "seat", "last", caller)
	}
}

// bookTwice books the last seat for two customers at once with g and returns their errors
// and how many times the function ran in all.
func bookTwice(t *testing.T, g once.Transaction) ([2]error, int32) {
	pool := setup(t, 4)
	b := newBarrier(2)
	var firstRuns, runs atomic.Int32
	var errs [2]error
	var wg sync.WaitGroup
	for i, customer := range []string{"cus_1", "cus_2"} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _, errs[i] = txValue(ctx, g, pool, customer, lastSeat(b, &firstRuns, &runs, i))
		})
	}
	wg.Wait()
	if n := effects(t, pool, "seat", "last"); n != 1 {
		t.Fatalf("%d seats booked, want 1", n)
	}
	return errs, runs.Load()
}

// A serialization failure inside a Transaction guard is reported as retryable, and is still
// the server's error.
func TestTransaction_SerializationFailureIsRetryable(t *testing.T) {
	t.Parallel()
	errs, _ := bookTwice(t, once.Transaction{Name: "seats.Book", IsoLevel: pgx.Serializable})
	failed := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		var pgErr *pgconn.PgError
		if !errors.Is(err, once.ErrRetryable) || !errors.As(err, &pgErr) || pgErr.Code != "40001" {
			t.Fatalf("err = %v; want ErrRetryable wrapping SQLSTATE 40001", err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d of 2 bookings failed (%v), want the one whose commit was refused", failed, errs)
	}
}

// With Retries, the refused booking runs again, reads the seat taken, and decides so: both
// calls succeed, one seat is booked.
func TestTransaction_RetriesRunTheRefusedDecisionAgain(t *testing.T) {
	t.Parallel()
	errs, runs := bookTwice(t, once.Transaction{Name: "seats.Book", IsoLevel: pgx.Serializable, Retries: 3})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("errors %v, want both bookings to succeed after the retry", errs)
	}
	if runs != 3 {
		t.Fatalf("the function ran %d times, want 3 (two, then the refused one again)", runs)
	}
}

// A claim whose server process is shut down by an administrator (57P01) while it waits is
// retryable: the server rolled it back, so the key is free and the retry runs.
func TestForever_AdminShutdownDuringTheClaimIsRetryable(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	// A name of its own: a guard that met existing rows lately reads the key's row before it
	// claims, and that history is kept per name.
	g := once.Forever{Name: "billing.ChargeAdminShutdown"}
	// An uncommitted insert of the key makes the guard's claim wait for it.
	blocker, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(ctx)
	if _, err := blocker.Exec(ctx, once.ForeverClaimSQL, g.Name, "", "order/1", once.NewOperationID(), "blocker", nil, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/1"}, func(context.Context) (int, error) { return 1, nil })
		done <- err
	}()
	var terminated bool
	deadline := time.Now().Add(time.Minute)
	for !terminated {
		if time.Now().After(deadline) {
			t.Fatal("the guard's claim never waited on the uncommitted insert")
		}
		err := pool.QueryRow(ctx, `SELECT coalesce(bool_or(pg_terminate_backend(pid)), false) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO once.operations%'`).Scan(&terminated)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = <-done
	var pgErr *pgconn.PgError
	if !errors.Is(err, once.ErrRetryable) || !errors.As(err, &pgErr) || pgErr.Code != "57P01" {
		t.Fatalf("err = %v; want ErrRetryable wrapping SQLSTATE 57P01", err)
	}
	blocker.Rollback(ctx)
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/1"}, func(context.Context) (int, error) { return 1, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("the retry: %+v, %v; want it to run", out, err)
	}
}

// A function's own transient failure releases the claim, and says it may be retried.
func TestForever_TransientFunctionErrorIsRetryableAndReleased(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "billing.Charge"}
	_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/1"}, func(ctx context.Context) (int, error) {
		_, err := pool.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'deadlock' USING ERRCODE = '40P01'; END $$`)
		return 0, err
	})
	if !errors.Is(err, once.ErrRetryable) {
		t.Fatalf("err = %v; want ErrRetryable", err)
	}
	if r := operationState(t, pool, out.Claim); r.state != "released" {
		t.Fatalf("operation %+v, want released", r)
	}
	// A terminal failure is recorded, whatever its cause: never retryable.
	_, _, err = once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/2"}, func(ctx context.Context) (int, error) {
		_, err := pool.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'deadlock' USING ERRCODE = '40P01'; END $$`)
		return 0, once.Terminal(err)
	})
	if err == nil || errors.Is(err, once.ErrRetryable) {
		t.Fatalf("terminal: err = %v; want an error that is not retryable", err)
	}
}
