package once_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// Bad input is refused before anything is sent: each call below returns an error wrapping
// ErrInvalid that says what is wrong, the guarded function does not run, and once's tables
// stay empty.
func TestBadInput_IsRefusedWithAClearErrorAndWritesNothing(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	var nilPool *pgxpool.Pool
	long := strings.Repeat("k", once.MaxKeyLen+1)

	ran := false
	fn := func(context.Context) error { ran = true; return nil }
	txFn := func(context.Context, pgx.Tx) error { ran = true; return nil }
	type call func() error
	drop := func(_ once.Outcome, err error) error { return err }
	dropClaim := func(_ *once.Claim, _ once.Outcome, err error) error { return err }
	dropHeld := func(_ *once.Held, err error) error { return err }
	dropAcquired := func(_ *once.Held, _ once.Outcome, err error) error { return err }
	dropReserve := func(_ int64, _ bool, err error) error { return err }
	dropRearm := func(_ bool, err error) error { return err }
	dropSweep := func(_ int64, err error) error { return err }

	stmt := once.Statement{Name: "billing.Allowance", Cap: 2}
	ep := once.Episode{Name: "alerts.Credit"}
	open := once.Open{Name: "research.Start"}
	lease := once.Lease{Name: "ideas.Lock", TTL: time.Second}
	tx := once.Transaction{Name: "sub.Sync"}
	req := once.Request{Name: "user.Load"}
	prov := once.Provider{Prefix: "charge"}
	scoped := once.WithRequestScope(bg)

	cases := []struct {
		what string
		want string // a fragment the message must hold
		call call
	}{
		// empty name
		{"statement, empty name", "empty guard name", func() error { return drop((once.Statement{Cap: 1}).Do(bg, pool, "k", 1, fn)) }},
		{"episode, empty name", "empty guard name", func() error { return drop((once.Episode{}).Do(bg, pool, "k", fn)) }},
		{"open, empty name", "empty guard name", func() error { return drop((once.Open{}).Do(bg, pool, "k", fn)) }},
		{"lease, empty name", "empty guard name", func() error { return drop((once.Lease{TTL: time.Second}).Do(bg, pool, "k", fn)) }},
		{"transaction, empty name", "empty guard name", func() error { return drop((once.Transaction{}).Do(bg, pool, "k", txFn)) }},
		{"request, empty name", "empty guard name", func() error { return drop((once.Request{}).Do(scoped, "k", fn)) }},
		{"provider, empty prefix", "empty guard name", func() error { return drop((once.Provider{}).Do(bg, "k", fn)) }},
		// empty key
		{"statement, empty key", "billing.Allowance: empty key", func() error { return drop(stmt.Do(bg, pool, "", 1, fn)) }},
		{"episode, empty key", "empty key", func() error { return drop(ep.Do(bg, pool, "", fn)) }},
		{"open, empty key", "empty key", func() error { return drop(open.Do(bg, pool, "", fn)) }},
		{"lease, empty key", "empty key", func() error { return drop(lease.Do(bg, pool, "", fn)) }},
		{"transaction, empty key", "empty key", func() error { return drop(tx.Do(bg, pool, "", txFn)) }},
		{"request, empty key", "empty key", func() error { return drop(req.Do(scoped, "", fn)) }},
		{"provider, empty key", "empty key", func() error { return drop(prov.Do(bg, "", fn)) }},
		// key over MaxKeyLen
		{"statement, long key", "over the 512-byte limit", func() error { return drop(stmt.Do(bg, pool, long, 1, fn)) }},
		{"episode, long key", "over the 512-byte limit", func() error { return drop(ep.Do(bg, pool, long, fn)) }},
		{"open, long key", "over the 512-byte limit", func() error { return drop(open.Do(bg, pool, long, fn)) }},
		{"lease, long key", "over the 512-byte limit", func() error { return drop(lease.Do(bg, pool, long, fn)) }},
		{"transaction, long key", "over the 512-byte limit", func() error { return drop(tx.Do(bg, pool, long, txFn)) }},
		{"provider, long key", "over the 512-byte limit", func() error { return drop(prov.Do(bg, long, fn)) }},
		// TTLs and windows
		{"lease, zero TTL", "non-positive TTL 0s", func() error { return drop((once.Lease{Name: "l"}).Do(bg, pool, "k", fn)) }},
		{"lease, negative TTL", "non-positive TTL -1s", func() error { return drop((once.Lease{Name: "l", TTL: -time.Second}).Do(bg, pool, "k", fn)) }},
		{"lease, negative wait", "negative wait", func() error {
			return drop((once.Lease{Name: "l", TTL: time.Second, Wait: -1}).Do(bg, pool, "k", fn))
		}},
		{"lease Extend, zero TTL", "non-positive TTL", func() error {
			return (&once.Held{Name: "l", Key: "k", Token: "t"}).Extend(bg, pool, 0)
		}},
		{"open, negative stale window", "negative stale window", func() error { return drop((once.Open{Name: "o", Stale: -time.Minute}).Do(bg, pool, "k", fn)) }},
		{"SweepStale, empty name", "empty guard name", func() error { return dropSweep(onceops.SweepStale(bg, pool, "")) }},
		{"transaction, negative lock timeout", "negative lock timeout", func() error {
			return drop((once.Transaction{Name: "t", LockTimeout: -time.Second}).Do(bg, pool, "k", txFn))
		}},
		{"transaction, NoWait with a timeout", "choose one", func() error {
			return drop((once.Transaction{Name: "t", NoWait: true, LockTimeout: time.Second}).Do(bg, pool, "k", txFn))
		}},
		{"provider, negative TTL", "negative TTL", func() error { return drop((once.Provider{Prefix: "p", TTL: -1}).Do(bg, "k", fn)) }},
		// counts
		{"statement, negative n", "n is -1", func() error { return drop(stmt.Do(bg, pool, "k", -1, fn)) }},
		{"statement, zero n", "n is 0", func() error { return dropReserve(stmt.Reserve(bg, pool, "k", 0)) }},
		{"statement Refund, negative n", "n is -2", func() error { return stmt.Refund(bg, pool, "k", -2) }},
		{"statement, negative cap", "negative cap -5", func() error {
			return drop((once.Statement{Name: "s", Cap: -5}).Do(bg, pool, "k", 1, fn))
		}},
		// nil DB, plain and typed
		{"statement, nil DB", "nil DB", func() error { return drop(stmt.Do(bg, nil, "k", 1, fn)) }},
		{"episode, typed nil pool", "nil DB (*pgxpool.Pool)", func() error { return drop(ep.Do(bg, nilPool, "k", fn)) }},
		{"episode Rearm, nil DB", "nil DB", func() error { return dropRearm(ep.Rearm(bg, nil, "k")) }},
		{"open, typed nil pool", "nil DB", func() error { return drop(open.Do(bg, nilPool, "k", fn)) }},
		{"open Claim.Finish, nil DB", "nil DB", func() error { return (&once.Claim{ID: 1, Token: "t"}).Finish(bg, nil) }},
		{"lease, nil DB", "nil DB", func() error { return dropAcquired(lease.Acquire(bg, nil, "k")) }},
		{"transaction, typed nil pool", "nil DB", func() error { return drop(tx.Do(bg, nilPool, "k", txFn)) }},
		{"ForceRelease, nil DB", "nil DB", func() error { return onceops.ForceRelease(bg, nil, "l", "k") }},
		// a context that has already ended
		{"statement, cancelled", "context already ended", func() error { return drop(stmt.Do(cancelled, pool, "k", 1, fn)) }},
		{"episode, cancelled", "context already ended", func() error { return drop(ep.Do(cancelled, pool, "k", fn)) }},
		{"open, cancelled", "context already ended", func() error { return drop(open.Do(cancelled, pool, "k", fn)) }},
		{"open Claim, cancelled", "context already ended", func() error { return dropClaim(open.Claim(cancelled, pool, "k")) }},
		{"lease, cancelled", "context already ended", func() error { return drop(lease.Do(cancelled, pool, "k", fn)) }},
		{"transaction, cancelled", "context already ended", func() error { return drop(tx.Do(cancelled, pool, "k", txFn)) }},
		{"request, cancelled", "context already ended", func() error { return drop(req.Do(once.WithRequestScope(cancelled), "k", fn)) }},
		{"provider, cancelled", "context already ended", func() error { return drop(prov.Do(cancelled, "k", fn)) }},
		// nil functions and handles
		{"statement, nil function", "nil function", func() error { return drop(stmt.Do(bg, pool, "k", 1, nil)) }},
		{"episode, nil function", "nil function", func() error { return drop(ep.Do(bg, pool, "k", nil)) }},
		{"open, nil function", "nil function", func() error { return drop(open.Do(bg, pool, "k", nil)) }},
		{"lease, nil function", "nil function", func() error { return drop(lease.Do(bg, pool, "k", nil)) }},
		{"transaction, nil function", "nil function", func() error { return drop(tx.Do(bg, pool, "k", nil)) }},
		{"request, nil function", "nil function", func() error { return drop(req.Do(scoped, "k", nil)) }},
		{"provider, nil function", "nil function", func() error { return drop(prov.Do(bg, "k", nil)) }},
		{"nil claim", "nil claim", func() error { return (*once.Claim)(nil).Finish(bg, pool) }},
		{"nil lease", "nil lease", func() error { return (*once.Held)(nil).Release(bg, pool) }},
		{"lease Restore, empty token", "empty token", func() error { return dropHeld(lease.Restore(bg, pool, "k", "")) }},
	}
	for _, c := range cases {
		ran = false
		err := c.call()
		if !errors.Is(err, once.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", c.what, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.what, err, c.want)
		}
		if strings.Contains(c.what, "cancelled") && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v does not wrap context.Canceled", c.what, err)
		}
		if ran {
			t.Errorf("%s: the function ran", c.what)
		}
	}
	if n := onceRows(t, pool); n != 0 {
		t.Fatalf("bad input wrote %d rows", n)
	}
}
