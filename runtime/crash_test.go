package once_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
)

// envCrashDSN passes the test database to the child process.
const envCrashDSN = "ONCE_CRASH_DSN"

// childConn connects the child process to the parent's test database.
func childConn(t *testing.T) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), os.Getenv(envCrashDSN))
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	return conn
}

// startChild prepares a database, starts the test's child on it and returns the parent's
// pool and the child, ready to be killed.
func startChild(t *testing.T) (*pgxpool.Pool, *crashtest.Child) {
	t.Helper()
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 4)
	prepare(t, pool)
	child, err := crashtest.Start(t, map[string]string{envCrashDSN: db.URL})
	if err != nil {
		t.Fatal(err)
	}
	return pool, child
}

// A process killed while holding a lease releases nothing; the lease expires by the
// database's clock and the next caller takes it over, with a higher fence.
func TestLease_KilledHolderIsTakenOverAfterItsTTL(t *testing.T) {
	// Short, but long enough that the parent sees the lease held before it expires even on
	// a loaded machine.
	const ttl = 2 * time.Second
	if crashtest.IsChild(t) {
		h, _, err := (once.Lease{Name: "ideas.Generate", TTL: ttl}).Acquire(context.Background(), childConn(t), "org/1")
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		crashtest.Ready(h.Token)
	}
	t.Parallel()
	pool, child := startChild(t)
	ctx := context.Background()
	token := child.Payload
	g := once.Lease{Name: "ideas.Generate", TTL: 10 * time.Second}
	if _, out, err := g.Acquire(ctx, pool, "org/1"); err != nil || out.Status != once.Busy {
		t.Fatalf("Acquire while the child holds the lease: %+v, %v; want busy", out, err)
	}
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, out, err := g.Acquire(ctx, pool, "org/1"); err != nil || out.Status != once.Busy {
		t.Fatalf("Acquire just after the kill: %+v, %v; want busy until the TTL passes", out, err)
	}
	if r := leaseState(t, pool, "ideas.Generate", "org/1"); r.holder != token || r.released {
		t.Fatalf("lease after the kill: %+v, want still the dead child's, unreleased", r)
	}
	var childAcquired time.Time
	if err := pool.QueryRow(ctx, "SELECT acquired_at FROM once.leases WHERE name = 'ideas.Generate' AND key = 'org/1'").Scan(&childAcquired); err != nil {
		t.Fatal(err)
	}

	g.Wait = 10 * ttl
	h, _, err := g.Acquire(ctx, pool, "org/1")
	if err != nil {
		t.Fatalf("Acquire after the TTL: %v", err)
	}
	if h.Fence != 2 {
		t.Fatalf("fence %d after the takeover, want 2", h.Fence)
	}
	var takenOver time.Time
	if err := pool.QueryRow(ctx, "SELECT acquired_at FROM once.leases WHERE name = 'ideas.Generate' AND key = 'org/1'").Scan(&takenOver); err != nil {
		t.Fatal(err)
	}
	if gap := takenOver.Sub(childAcquired); gap < ttl {
		t.Fatalf("taken over %v after the child acquired it, before its %v TTL", gap, ttl)
	}
	if _, err := (once.Lease{Name: "ideas.Generate"}).Restore(ctx, pool, "org/1", token); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("Lease.Restore with the dead child's token: %v, want ErrNotOwner", err)
	}
}

// A process killed while its open claim is open never settles it. Within the stale window
// the claim keeps redirecting callers to it; after the window the next claim closes it as
// stale and starts the work again.
func TestOpen_KilledWorkersClaimIsClosedAsStaleAndTheKeyClaimedAgain(t *testing.T) {
	const stale = 2 * time.Second
	g := once.Open{Name: "research.StartRun", Stale: stale}
	if crashtest.IsChild(t) {
		c, _, err := g.Claim(context.Background(), childConn(t), "org/1")
		if err != nil || c == nil {
			t.Fatalf("child: claim %v, %v", c, err)
		}
		crashtest.Ready(strconv.FormatInt(c.ID, 10))
	}
	t.Parallel()
	pool, child := startChild(t)
	ctx := context.Background()
	dead := payloadID(t, child.Payload)
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	_, out, err := doValue(ctx, g, pool, "org/1", func(context.Context) (int, error) {
		t.Error("started again while the dead claim was inside its window")
		return 0, nil
	})
	if err != nil || out.Status != once.InFlight || out.Holder != dead {
		t.Fatalf("claim just after the kill: %+v, %v; want in flight at the dead claim %s", out, err, dead)
	}

	// Claim until the window has passed, as callers arriving over time would.
	deadline := time.Now().Add(10 * stale)
	for {
		_, out, err = doValue(ctx, g, pool, "org/1", func(ctx context.Context) (int, error) {
			return 0, effect(ctx, pool, "open", "org/1", 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status == once.Ran || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out.Status != once.Ran || out.Claim == dead {
		t.Fatalf("claim after the window: %+v, want a new claim that ran", out)
	}
	if n := effects(t, pool, "open", "org/1"); n != 1 {
		t.Fatalf("%d runs after the takeover, want 1", n)
	}
	var state string
	var openFor float64
	err = pool.QueryRow(ctx, "SELECT state, extract(epoch FROM closed_at - opened_at) FROM once.open_claims WHERE id = $1", dead).Scan(&state, &openFor)
	if err != nil {
		t.Fatal(err)
	}
	if state != "stale" || openFor < stale.Seconds() {
		t.Fatalf("dead claim %s, closed after %.3fs; want stale, closed no sooner than the %v window", state, openFor, stale)
	}
}
