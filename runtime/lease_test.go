package once_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

type leaseRow struct {
	holder     string
	fence      int64
	released   bool
	releasedBy string
}

func leaseState(t *testing.T, db once.DB, name, key string) leaseRow {
	t.Helper()
	var r leaseRow
	var by *string
	err := db.QueryRow(context.Background(), "SELECT holder, fence, released_at IS NOT NULL, released_by FROM once.leases WHERE name = $1 AND key = $2", name, key).
		Scan(&r.holder, &r.fence, &r.released, &by)
	if err != nil {
		t.Fatal(err)
	}
	if by != nil {
		r.releasedBy = *by
	}
	return r
}

func TestLease_ConcurrentAcquireHasOneHolder(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	g := once.Lease{Name: "ideas.Generate", TTL: 10 * time.Second}
	var busy atomic.Int64
	allAnswered := make(chan struct{})
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, out, err := doValue(ctx, g, conn, "org/1", func(ctx context.Context) (int, error) {
			// Hold the lease until every other caller has been turned away.
			select {
			case <-allAnswered:
			case <-time.After(20 * time.Second):
			}
			return 0, effect(ctx, conn, "lease", "org/1", caller)
		})
		if err == nil && out.Status == once.Busy {
			if busy.Add(1) == stormSize-1 {
				close(allAnswered)
			}
		}
		return err
	})
	if n := effects(t, pool, "lease", "org/1"); n != 1 {
		t.Fatalf("%d holders ran under one lease, want exactly 1", n)
	}
	if got := busy.Load(); got != stormSize-1 {
		t.Fatalf("%d callers told busy, want %d", got, stormSize-1)
	}
	if r := leaseState(t, pool, g.Name, "org/1"); !r.released || r.fence != 1 {
		t.Fatalf("lease after Do: %+v, want released at fence 1", r)
	}
}

// The negative control: read whether the lease is free, then write it unconditionally. The
// barrier holds every caller between the read and the write until all have seen it free, so
// every one of them believes it holds the lease.
func TestLease_NegativeControl_ReadThenWriteGivesEveryoneTheLease(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var held bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM once.leases WHERE name = 'n' AND key = 'k' AND released_at IS NULL AND expires_at > clock_timestamp())").Scan(&held); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if held {
			return nil
		}
		if _, err := conn.Exec(ctx, `INSERT INTO once.leases (name, key, holder, fence, acquired_at, expires_at)
VALUES ('n', 'k', $1, 1, clock_timestamp(), clock_timestamp() + interval '10 seconds')
ON CONFLICT (name, key) DO UPDATE SET holder = EXCLUDED.holder`, strconv.Itoa(caller)); err != nil {
			return err
		}
		return effect(ctx, conn, "lease", "k", caller)
	})
	if n := effects(t, pool, "lease", "k"); n != stormSize {
		t.Fatalf("%d holders without the conditional acquire, want all %d (the race this test must be able to see)", n, stormSize)
	}
}

func TestLease_ReleaseLetsTheNextHolderInWithAHigherFence(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "n", TTL: 10 * time.Second}
	a, _, err := g.Acquire(ctx, pool, "k")
	if err != nil || a.Fence != 1 {
		t.Fatalf("first Acquire: %+v, %v", a, err)
	}
	if _, out, err := g.Acquire(ctx, pool, "k"); err != nil || out.Status != once.Busy {
		t.Fatalf("Acquire while held: %+v, %v; want busy", out, err)
	}
	if err := a.Release(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("second Release: %v, want ErrNotOwner", err)
	}
	b, _, err := g.Acquire(ctx, pool, "k")
	if err != nil || b.Fence != 2 || b.Token == a.Token {
		t.Fatalf("Acquire after release: %+v, %v; want fence 2 and a new token", b, err)
	}
	_, out, err := doValue(ctx, g, pool, "other", func(ctx context.Context) (int, error) {
		h, ok := once.LeaseFrom(ctx)
		if !ok || h.Key != "other" {
			t.Errorf("LeaseFrom: %+v, %v", h, ok)
		}
		return 0, nil
	})
	if err != nil || out.Status != once.Ran || out.Fence != 1 {
		t.Fatalf("Do: %+v, %v", out, err)
	}
}

// A holder that pauses past its TTL and is taken over can no longer release or extend: the
// fence moved on, and the new holder keeps the lease.
func TestLease_ExpiredHolderTakenOverCannotReleaseOrExtend(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "n", TTL: 150 * time.Millisecond}
	old, _, err := g.Acquire(ctx, pool, "k")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	g.TTL = 10 * time.Second
	next, _, err := g.Acquire(ctx, pool, "k")
	if err != nil || next.Fence != old.Fence+1 {
		t.Fatalf("takeover: %+v, %v; want fence %d", next, err, old.Fence+1)
	}
	if err := old.Release(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("old holder's Release: %v, want ErrNotOwner", err)
	}
	if err := old.Extend(ctx, pool, time.Minute); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("old holder's Extend: %v, want ErrNotOwner", err)
	}
	if _, err := (once.Lease{Name: "n"}).Restore(ctx, pool, "k", old.Token); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("old holder's Lease.Restore: %v, want ErrNotOwner", err)
	}
	if r := leaseState(t, pool, "n", "k"); r.holder != next.Token || r.released || r.fence != next.Fence {
		t.Fatalf("lease %+v, want still held by the new holder", r)
	}
	if err := next.Release(ctx, pool); err != nil {
		t.Fatalf("new holder's Release: %v", err)
	}
}

// A lease that lapsed was free for anyone to take: extending it would hide that.
func TestLease_ExtendKeepsALiveLeaseAndRefusesALapsedOne(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "n", TTL: 300 * time.Millisecond}
	h, _, err := g.Acquire(ctx, pool, "k")
	if err != nil {
		t.Fatal(err)
	}
	before := h.ExpiresAt
	if err := h.Extend(ctx, pool, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !h.ExpiresAt.After(before.Add(5 * time.Second)) {
		t.Fatalf("ExpiresAt %v after extending %v by 10s", h.ExpiresAt, before)
	}
	var stored time.Time
	if err := pool.QueryRow(ctx, "SELECT expires_at FROM once.leases WHERE name = 'n' AND key = 'k'").Scan(&stored); err != nil || !stored.Equal(h.ExpiresAt) {
		t.Fatalf("stored expiry %v (%v), want the extended %v", stored, err, h.ExpiresAt)
	}
	time.Sleep(350 * time.Millisecond) // past the original TTL: the extension holds
	if _, out, err := g.Acquire(ctx, pool, "k"); err != nil || out.Status != once.Busy {
		t.Fatalf("Acquire of an extended lease: %+v, %v; want busy", out, err)
	}
	// The lease lapses (its holder stalled past the expiry).
	if _, err := pool.Exec(ctx, "UPDATE once.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'n' AND key = 'k'"); err != nil {
		t.Fatal(err)
	}
	if err := h.Extend(ctx, pool, time.Minute); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("Extend of a lapsed lease: %v, want ErrNotOwner", err)
	}
	// Nobody took it over, so the holder may still release it.
	if err := h.Release(ctx, pool); err != nil {
		t.Fatalf("Release of a lapsed lease nobody took: %v", err)
	}
}

func TestLease_WaitTakesTheLeaseWhenItIsReleased(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	holder := once.Lease{Name: "n", TTL: 10 * time.Second}
	h, _, err := holder.Acquire(ctx, pool, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The waiter's own connection counts its attempts to acquire. The lease is released
	// once a second attempt has begun, so the first was refused: the waiter waited.
	var attempts atomic.Int64
	cfg, err := pgx.ParseConfig(pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = beforeQuery(func(sql string) {
		if sql == once.AcquireSQL {
			attempts.Add(1)
		}
	})
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	released := make(chan error, 1)
	go func() {
		for attempts.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		released <- h.Release(ctx, pool)
	}()
	waiter := once.Lease{Name: "n", TTL: 10 * time.Second, Wait: 20 * time.Second}
	_, out, err := doValue(ctx, waiter, conn, "k", func(context.Context) (int, error) { return 1, nil })
	if err != nil || out.Status != once.Ran || out.Fence != 2 {
		t.Fatalf("waiting Do: %+v, %v; want ran at fence 2", out, err)
	}
	if err := <-released; err != nil {
		t.Fatalf("the holder's release: %v", err)
	}
	// A wait that runs out is busy.
	if _, _, err := holder.Acquire(ctx, pool, "k"); err != nil {
		t.Fatal(err)
	}
	short := once.Lease{Name: "n", TTL: time.Second, Wait: 50 * time.Millisecond}
	start := time.Now()
	if _, out, err := doValue(ctx, short, pool, "k", func(context.Context) (int, error) { return 0, nil }); err != nil || out.Status != once.Busy {
		t.Fatalf("wait past the holder: %v, %v; want busy", out.Status, err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before the 50ms wait", waited)
	}
}

func TestLease_RestoreAndForceRelease(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "n", TTL: 10 * time.Second}
	h, _, err := g.Acquire(ctx, pool, "k")
	if err != nil {
		t.Fatal(err)
	}
	restored, err := (once.Lease{Name: "n"}).Restore(ctx, pool, "k", h.Token)
	if err != nil || restored.Fence != h.Fence || !restored.ExpiresAt.Equal(h.ExpiresAt) {
		t.Fatalf("Lease.Restore: %+v, %v; want %+v", restored, err, h)
	}
	if _, err := (once.Lease{Name: "n"}).Restore(ctx, pool, "k", "someone-else"); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("Lease.Restore with a wrong token: %v, want ErrNotOwner", err)
	}
	if err := onceops.ForceRelease(ctx, pool, "n", "k"); err != nil {
		t.Fatal(err)
	}
	if r := leaseState(t, pool, "n", "k"); !r.released || r.releasedBy != "operator" {
		t.Fatalf("lease %+v after ForceRelease, want released by the operator", r)
	}
	if err := restored.Release(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("holder's Release after ForceRelease: %v, want ErrNotOwner", err)
	}
	if err := restored.Extend(ctx, pool, time.Second); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("holder's Extend after ForceRelease: %v, want ErrNotOwner", err)
	}
	if _, _, err := g.Acquire(ctx, pool, "k"); err != nil {
		t.Fatalf("Acquire after ForceRelease: %v", err)
	}
}

// Do releases the lease when the function fails or panics, and reports a lease lost while
// the function ran.
func TestLease_DoReleasesOnErrorAndPanicAndReportsALostLease(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Lease{Name: "n", TTL: 10 * time.Second}
	boom := errors.New("boom")
	if _, _, err := doValue(ctx, g, pool, "k", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("Do: %v, want the function's error", err)
	}
	if r := leaseState(t, pool, "n", "k"); !r.released {
		t.Fatal("lease held after the function failed")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the caller")
			}
		}()
		doValue(ctx, g, pool, "k", func(context.Context) (int, error) { panic("kaboom") })
	}()
	if r := leaseState(t, pool, "n", "k"); !r.released {
		t.Fatal("lease held after the function panicked")
	}
	_, _, err := doValue(ctx, g, pool, "k", func(ctx context.Context) (int, error) {
		return 0, onceops.ForceRelease(ctx, pool, "n", "k")
	})
	if !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("Do whose lease was taken away: %v, want ErrNotOwner", err)
	}
}
