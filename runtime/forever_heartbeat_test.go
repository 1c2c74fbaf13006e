package once_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// A repeat-safe effect that runs longer than Stale: with Heartbeat, a caller arriving after
// Stale finds it alive (in flight) and the effect happens once. The negative control has no
// heartbeat: the caller takes the living holder for dead, takes its claim over and does the
// effect a second time, and the first holder's outcome is refused.
func TestForever_HeartbeatKeepsALongEffectItsClaim(t *testing.T) {
	t.Parallel()
	pool := setup(t, 6)
	const stale = 2 * time.Second
	for _, heartbeat := range []bool{true, false} {
		name := map[bool]string{true: "heartbeat", false: "negative control: no heartbeat"}[heartbeat]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			g := once.Forever{Name: "reports.Render", Stale: stale, RepeatSafe: true, NoHeartbeat: !heartbeat}
			key := name
			var wg sync.WaitGroup
			var firstErr error
			started := make(chan struct{})
			wg.Go(func() {
				_, _, firstErr = once.ForeverValue(ctx, pool, g, once.Ref{Key: key}, func(ctx context.Context) (int, error) {
					close(started)
					time.Sleep(2*stale + stale/2) // a long render, with no checkpoint on the way
					return 1, effect(ctx, pool, "render", key, 1)
				})
			})
			// The second caller comes Stale and a half after the claim landed (however long
			// the claim itself took), while the first still renders.
			<-started
			time.Sleep(stale + stale/2)
			_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key}, func(ctx context.Context) (int, error) {
				return 2, effect(ctx, pool, "render", key, 2)
			})
			wg.Wait()
			n := effects(t, pool, "render", key)
			switch {
			case heartbeat && (err != nil || out.Status != once.InFlight || firstErr != nil || n != 1):
				t.Fatalf("second caller: %+v %v; first: %v; %d renders; want in flight and one render", out, err, firstErr, n)
			case !heartbeat && (out.Status != once.Ran || !errors.Is(firstErr, once.ErrNotOwner) || n != 2):
				t.Fatalf("second caller: %+v %v; first: %v; %d renders; want a takeover and two renders", out, err, firstErr, n)
			}
		})
	}
}

// A heartbeat that finds its claim gone (here, taken by someone else while the database was
// unreachable for Stale) cancels the function's context, with a cause wrapping ErrNotOwner,
// so the function stops working for a claim it no longer holds. The negative control has no
// heartbeat: nothing tells the function.
func TestForever_HeartbeatLosingTheClaimCancelsTheFunction(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	for _, heartbeat := range []bool{true, false} {
		t.Run(map[bool]string{true: "heartbeat", false: "negative control: no heartbeat"}[heartbeat], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			g := once.Forever{Name: "reports.Render", Stale: 300 * time.Millisecond, NoHeartbeat: !heartbeat}
			errNeverTold := errors.New("the function was never told")
			var fnErr error
			_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: t.Name()}, func(ctx context.Context) (int, error) {
				a, _ := once.AttemptFrom(ctx)
				if _, err := pool.Exec(ctx, `UPDATE once.operations SET token = 'another holder' WHERE id = $1`, a.ID()); err != nil {
					return 0, err
				}
				fnErr = causeWithin(ctx, 3*time.Second, errNeverTold)
				return 0, fnErr
			})
			if out.Status != once.Ran || !errors.Is(err, once.ErrNotOwner) {
				t.Fatalf("%+v %v, want Ran, and the outcome refused (ErrNotOwner)", out, err)
			}
			if heartbeat != errors.Is(fnErr, once.ErrNotOwner) || heartbeat == errors.Is(fnErr, errNeverTold) {
				t.Fatalf("the function ended with %v", fnErr)
			}
		})
	}
}

// Only a pool is used by the heartbeat: there alive_at moves while the function runs. In a
// transaction or on one connection, which two goroutines cannot share, there is none, and the
// function's own statements on that DB run undisturbed.
func TestForever_HeartbeatOnlyOnAPool(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	const stale = 300 * time.Millisecond
	g := once.Forever{Name: "reports.Render", Stale: stale}
	// fn works on db for a few heartbeat intervals, then reports whether its claim showed
	// life meanwhile.
	fn := func(db once.DB) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			a, _ := once.AttemptFrom(ctx)
			for range 6 {
				if _, err := db.Exec(ctx, `SELECT pg_sleep(0.05)`); err != nil {
					return false, err
				}
				time.Sleep(stale / 6)
			}
			// claimed_at and alive_at are two readings of clock_timestamp() in the claim's
			// insert, microseconds apart; a heartbeat moves alive_at by Stale/3.
			var moved bool
			err := db.QueryRow(ctx, `SELECT alive_at - claimed_at > interval '50 milliseconds' FROM once.operations WHERE id = $1`, a.ID()).Scan(&moved)
			return moved, err
		}
	}
	if moved, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "pool"}, fn(pool)); err != nil || !moved {
		t.Fatalf("on a pool: showed life %v, %v; want the heartbeat's", moved, err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if moved, _, err := once.ForeverValue(ctx, tx, g, once.Ref{Key: "tx"}, fn(tx)); err != nil || moved {
		t.Fatalf("in a transaction: showed life %v, %v; want no heartbeat and no error", moved, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var one once.DB = conn.Conn()
	if _, ok := one.(*pgx.Conn); !ok {
		t.Fatalf("%T is not a single connection", one)
	}
	if moved, _, err := once.ForeverValue(ctx, one, g, once.Ref{Key: "conn"}, fn(one)); err != nil || moved {
		t.Fatalf("on one connection: showed life %v, %v; want no heartbeat and no error", moved, err)
	}
}

// The default heartbeat costs a short function nothing: a fresh key is its claim and its
// settle, two statements. A function that outlives Stale/3 gets heartbeats (the control,
// which shows the counter would see them).
func TestForever_ShortEffectSendsNoHeartbeat(t *testing.T) {
	t.Parallel()
	pool, trips := setupTraced(t)
	ctx := context.Background()
	once.SetDuplicateShare("reports.Short", 0)
	g := once.Forever{Name: "reports.Short"}
	for i := range 20 {
		if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: fmt.Sprint("k", i)}, func(context.Context) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, statements := trips.take(); statements != 40 {
		t.Fatalf("%d statements for 20 short calls, want 40 (claim and settle each)", statements)
	}
	long := once.Forever{Name: "reports.Short", Stale: 300 * time.Millisecond}
	// It outlives the interval (100 ms) ten times, so that two beats land even when a loaded
	// machine delays some.
	if _, _, err := once.ForeverValue(ctx, pool, long, once.Ref{Key: "long"}, func(context.Context) (int, error) { time.Sleep(time.Second); return 0, nil }); err != nil {
		t.Fatal(err)
	}
	if _, statements := trips.take(); statements < 4 {
		t.Fatalf("%d statements for a call outliving Stale/3 ten times, want its heartbeats beside claim and settle", statements)
	}
}

// causeWithin waits for ctx to end and returns its cause, or never if it has not ended
// within d: how a guarded function learns, or does not, that its claim was taken from it.
func causeWithin(ctx context.Context, d time.Duration, never error) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(d):
		return never
	}
}
