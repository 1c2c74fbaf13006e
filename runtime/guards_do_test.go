package once_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Each guard's Do keeps its kind's promise for a function that returns only an error: the
// first call runs it (one lasting effect), a duplicate does not, and the function's error
// comes back as it is.
func TestGuards_DoKeepsThePromiseForAFunctionWithNoValue(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	errBoom := errors.New("boom")
	run := func(guard, key string) func(context.Context) error {
		return func(ctx context.Context) error { return effect(ctx, pool, guard, key, 0) }
	}
	scope := once.WithRequestScope(ctx)
	runTx := func(guard, key string) func(context.Context, pgx.Tx) error {
		return func(ctx context.Context, tx pgx.Tx) error { return effect(ctx, tx, guard, key, 0) }
	}
	for _, c := range []struct {
		guard string
		do    func(key string, fail bool) (once.Outcome, error)
		// runs is how many of two calls on one key run the function.
		runs int
	}{
		{"forever", func(key string, fail bool) (once.Outcome, error) {
			return once.Forever{Name: "func.forever"}.Do(ctx, pool, once.Ref{Key: key}, failing(run("forever", key), fail, errBoom))
		}, 1},
		{"open", func(key string, fail bool) (once.Outcome, error) {
			return once.Open{Name: "func.open"}.Do(ctx, pool, key, failing(run("open", key), fail, errBoom))
		}, 2}, // open again once the first call finished
		{"episode", func(key string, fail bool) (once.Outcome, error) {
			return once.Episode{Name: "func.episode"}.Do(ctx, pool, key, failing(run("episode", key), fail, errBoom))
		}, 1},
		{"statement", func(key string, fail bool) (once.Outcome, error) {
			return once.Statement{Name: "func.statement", Cap: 1}.Do(ctx, pool, key, 1, failing(run("statement", key), fail, errBoom))
		}, 1},
		{"lease", func(key string, fail bool) (once.Outcome, error) {
			return once.Lease{Name: "func.lease", TTL: time.Minute}.Do(ctx, pool, key, failing(run("lease", key), fail, errBoom))
		}, 2}, // released after each call
		{"transaction", func(key string, fail bool) (once.Outcome, error) {
			fn := runTx("transaction", key)
			return once.Transaction{Name: "func.transaction"}.Do(ctx, pool, key, func(ctx context.Context, tx pgx.Tx) error {
				if fail {
					return errBoom
				}
				return fn(ctx, tx)
			})
		}, 2},
		{"forever, scoped", func(key string, fail bool) (once.Outcome, error) {
			return once.Forever{Name: "func.scoped"}.Do(ctx, pool, once.Ref{Scope: once.MustKey("acct"), Key: once.MustKey(key)},
				failing(run("forever, scoped", key), fail, errBoom))
		}, 1},
		{"provider", func(key string, fail bool) (once.Outcome, error) {
			return once.Provider{Prefix: "func.provider"}.Do(ctx, key, failing(run("provider", key), fail, errBoom))
		}, 2}, // the provider, not this process, drops the second
		{"request", func(key string, fail bool) (once.Outcome, error) {
			return once.Request{Name: "func.request"}.Do(scope, key, failing(run("request", key), fail, errBoom))
		}, 1},
	} {
		t.Run(c.guard, func(t *testing.T) {
			key := "k"
			for i := range 2 {
				if out, err := c.do(key, false); err != nil || (i == 0 && out.Status != once.Ran) {
					t.Fatalf("call %d: %+v, %v", i, out, err)
				}
			}
			if n := effects(t, pool, c.guard, key); n != c.runs {
				t.Fatalf("%d effects of two calls, want %d", n, c.runs)
			}
			if _, err := c.do("failing", true); !errors.Is(err, errBoom) {
				t.Fatalf("a failing function: %v, want its error", err)
			}
		})
	}
}

// failing makes fn fail with err instead of running, when fail is set.
func failing(fn func(context.Context) error, fail bool, err error) func(context.Context) error {
	if !fail {
		return fn
	}
	return func(context.Context) error { return err }
}

// Forever.Do and ForeverValue of one guard name and key are one promise: each replays what
// the other recorded, ForeverValue getting T's zero value for a key recorded without one,
// and Do a duplicate's nil error for a key recorded with one.
func TestForever_DoAndForeverValueShareOneRecord(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	g := once.Forever{Name: "func.shared"}
	ran := 0
	if _, err := g.Do(ctx, pool, once.Ref{Key: "k"}, func(context.Context) error { ran++; return nil }); err != nil {
		t.Fatal(err)
	}
	v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "k"}, func(context.Context) (int, error) { ran++; return 7, nil })
	if err != nil || out.Status != once.Duplicate || v != 0 || ran != 1 {
		t.Fatalf("ForeverValue after Do: %d %+v, %v, ran %d times; want a replay of no value", v, out, err, ran)
	}
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "v"}, func(context.Context) (int, error) { ran++; return 7, nil }); err != nil {
		t.Fatal(err)
	}
	if out, err := g.Do(ctx, pool, once.Ref{Key: "v"}, func(context.Context) error { ran++; return nil }); err != nil || out.Status != once.Duplicate || ran != 2 {
		t.Fatalf("Do after ForeverValue: %+v, %v, ran %d times; want a replay", out, err, ran)
	}
	if _, err := g.Do(ctx, pool, once.Ref{Key: "k"}, nil); !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("a nil function: %v, want ErrInvalid", err)
	}
}
