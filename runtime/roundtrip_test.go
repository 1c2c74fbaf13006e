package once_test

import (
	"context"
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
	stmt := once.Statement[int]{Name: "s", Cap: 2}
	ep := once.Episode[int]{Name: "e"}
	open := once.Open[int]{Name: "o"}
	lease := once.Lease[int]{Name: "l", TTL: time.Minute}
	var claim *once.Claim

	cases := []struct {
		path string
		want int64
		run  func() error
	}{
		{"request Do", 0, func() error {
			_, _, err := (once.Request[int]{Name: "r"}).Do(once.WithRequestScope(ctx), "k", noop)
			return err
		}},
		{"provider Do", 0, func() error {
			_, _, err := (once.Provider[int]{Prefix: "p"}).Do(ctx, "k", noop)
			return err
		}},
		{"statement Reserve, new counter", 1, func() error { _, _, err := stmt.Reserve(ctx, pool, "k", 1); return err }},
		{"statement Do, existing counter", 1, func() error { _, _, err := stmt.Do(ctx, pool, "k", 1, noop); return err }},
		{"statement Do, refused (reads the count)", 2, func() error { _, _, err := stmt.Do(ctx, pool, "k", 1, noop); return err }},
		{"episode Do, fires", 1, func() error { _, _, err := ep.Do(ctx, pool, "k", noop); return err }},
		{"episode Do, duplicate", 1, func() error { _, _, err := ep.Do(ctx, pool, "k", noop); return err }},
		{"episode Do, fires after a rearm", 1, func() error {
			ep.Rearm(ctx, pool, "k")
			counter.reset()
			_, _, err := ep.Do(ctx, pool, "k", noop)
			return err
		}},
		{"open Claim, fresh key", 1, func() error { var err error; claim, _, err = open.Claim(ctx, pool, "k"); return err }},
		{"open Claim, in flight (reads the handle)", 2, func() error { _, _, err := open.Claim(ctx, pool, "k"); return err }},
		{"open Claim.Finish", 1, func() error { return claim.Finish(ctx, pool) }},
		{"open Do, claim and finish", 2, func() error { _, _, err := open.Do(ctx, pool, "k", noop); return err }},
		{"lease Acquire, new lease", 1, func() error { _, err := lease.Acquire(ctx, pool, "new"); return err }},
		{"lease Do, acquire and release", 2, func() error { _, _, err := lease.Do(ctx, pool, "k", noop); return err }},
		{"lease Do, takes a released lease", 2, func() error { _, _, err := lease.Do(ctx, pool, "k", noop); return err }},
		{"transaction Do: BEGIN, lock, COMMIT", 3, func() error {
			_, _, err := (once.Transaction[int]{Name: "t"}).Do(ctx, pool, "k", func(context.Context, pgx.Tx) (int, error) { return 0, nil })
			return err
		}},
		{"transaction Do with a lock timeout", 3, func() error {
			_, _, err := (once.Transaction[int]{Name: "t", LockTimeout: time.Second}).Do(ctx, pool, "k", func(context.Context, pgx.Tx) (int, error) { return 0, nil })
			return err
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
