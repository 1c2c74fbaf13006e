package once_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Round trips are the cost of a promise: the common-path claim is one statement (the insert
// is the check, never select-then-insert); request and provider send none. The counts are
// exact, so a change that adds a statement to a path fails here and has to say why.
func TestRoundTrips_CommonPathsAreOneStatement(t *testing.T) {
	t.Parallel()
	pool, counter := setupCounted(t)
	ctx := context.Background()
	noop := func(context.Context) (int, error) { return 0, nil }
	stmt := once.Statement{Name: "s", Cap: 2}
	ep := once.Episode{Name: "e"}
	open := once.Open{Name: "o"}
	lease := once.Lease{Name: "l", TTL: time.Minute}
	// A guard's history of answers lives as long as the process: start from none, so that a
	// run of -count=N counts what the first did.
	once.SetStatementRefusalShare(stmt.Name, 0)
	once.SetStatementBusyShare(stmt.Name, 0)
	once.SetOpenDuplicateShare(open.Name, 0)
	var claim *once.Claim
	// is checks that a call took the path its case names: a count is only worth something
	// for the path it was counted on (a latch that did not fire sends one statement too).
	is := func(want once.Status, out once.Outcome, err error) error {
		if err == nil && out.Status != want {
			return fmt.Errorf("status %v, want %v", out.Status, want)
		}
		return err
	}

	cases := []struct {
		path string
		want int64
		run  func() error
	}{
		{"request Do", 0, func() error {
			_, out, err := once.RequestValue(once.WithRequestScope(ctx), (once.Request{Name: "r"}), "k", noop)
			return is(once.Ran, out, err)
		}},
		{"provider Do", 0, func() error {
			_, out, err := providerValue(ctx, (once.Provider{Prefix: "p"}), "k", noop)
			return is(once.Ran, out, err)
		}},
		{"statement Reserve, new counter", 1, func() error {
			_, ok, err := stmt.Reserve(ctx, pool, "k", 1)
			if err == nil && !ok {
				err = fmt.Errorf("refused")
			}
			return err
		}},
		// A reservation's first statement follows its guard's history (TestStatement_RoundTrips
		// walks every turn): on a counter holding units, the common path is that of a guard
		// whose reservations meet such counters, one statement.
		{"statement Do, existing counter", 1, func() error {
			once.SetStatementBusyShare(stmt.Name, 1)
			_, out, err := stmtValue(ctx, stmt, pool, "k", 1, noop)
			return is(once.Ran, out, err)
		}},
		{"statement Do, refused (the count comes back with the refusal)", 1, func() error {
			once.SetStatementBusyShare(stmt.Name, 1)
			_, out, err := stmtValue(ctx, stmt, pool, "k", 1, noop)
			return is(once.Refused, out, err)
		}},
		{"episode Do, fires", 1, func() error { _, out, err := doValue(ctx, ep, pool, "k", noop); return is(once.Ran, out, err) }},
		{"episode Do, duplicate", 1, func() error { _, out, err := doValue(ctx, ep, pool, "k", noop); return is(once.Duplicate, out, err) }},
		{"episode Do, fires after a rearm", 1, func() error {
			if rearmed, err := ep.Rearm(ctx, pool, "k"); err != nil || !rearmed {
				return fmt.Errorf("rearm: %v, %v", rearmed, err)
			}
			counter.reset()
			_, out, err := doValue(ctx, ep, pool, "k", noop)
			return is(once.Ran, out, err)
		}},
		{"open Claim, fresh key", 1, func() error {
			var out once.Outcome
			var err error
			claim, out, err = open.Claim(ctx, pool, "k")
			return is(once.Ran, out, err)
		}},
		{"open Claim, in flight (reads the handle)", 2, func() error { _, out, err := open.Claim(ctx, pool, "k"); return is(once.InFlight, out, err) }},
		{"open Claim.Finish", 1, func() error { return claim.Finish(ctx, pool) }},
		{"open Do, claim and finish", 2, func() error { _, out, err := doValue(ctx, open, pool, "k", noop); return is(once.Ran, out, err) }},
		{"lease Acquire, new lease", 1, func() error { _, _, err := lease.Acquire(ctx, pool, "new"); return err }},
		{"lease Do, acquire and release", 2, func() error { _, out, err := doValue(ctx, lease, pool, "k", noop); return is(once.Ran, out, err) }},
		{"lease Do, takes a released lease", 2, func() error { _, out, err := doValue(ctx, lease, pool, "k", noop); return is(once.Ran, out, err) }},
		{"transaction Do: BEGIN, lock, COMMIT", 3, func() error {
			_, out, err := txValue(ctx, (once.Transaction{Name: "t"}), pool, "k", func(context.Context, pgx.Tx) (int, error) { return 0, nil })
			return is(once.Ran, out, err)
		}},
		{"transaction Do with a lock timeout", 3, func() error {
			_, out, err := txValue(ctx, (once.Transaction{Name: "t", LockTimeout: time.Second}), pool, "k", func(context.Context, pgx.Tx) (int, error) { return 0, nil })
			return is(once.Ran, out, err)
		}},
	}
	for _, c := range cases {
		counter.reset()
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if got := counter.n.Load(); got != c.want {
			t.Errorf("%s: %d statements, want %d:\n\t%s", c.path, got, c.want, strings.Join(counter.reset(), "\n\t"))
		}
	}
}
