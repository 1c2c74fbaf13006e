package once_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Each Func guard keeps its kind's promise for a function that returns only an error: the
// first call runs it (one lasting effect), a duplicate does not, and the function's error
// comes back as it is.
func TestFuncGuards_KeepTheirPromiseForAFunctionWithNoValue(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	errBoom := errors.New("boom")
	run := func(guard, key string) func(context.Context) error {
		return func(ctx context.Context) error { return effect(ctx, pool, guard, key, 0) }
	}
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
			return once.ForeverFunc{Name: "func.forever"}.Do(ctx, pool, key, failing(run("forever", key), fail, errBoom))
		}, 1},
		{"open", func(key string, fail bool) (once.Outcome, error) {
			return once.OpenFunc{Name: "func.open"}.Do(ctx, pool, key, failing(run("open", key), fail, errBoom))
		}, 2}, // open again once the first call finished
		{"episode", func(key string, fail bool) (once.Outcome, error) {
			return once.EpisodeFunc{Name: "func.episode"}.Do(ctx, pool, key, failing(run("episode", key), fail, errBoom))
		}, 1},
		{"statement", func(key string, fail bool) (once.Outcome, error) {
			return once.StatementFunc{Name: "func.statement", Cap: 1}.Do(ctx, pool, key, 1, failing(run("statement", key), fail, errBoom))
		}, 1},
		{"lease", func(key string, fail bool) (once.Outcome, error) {
			return once.LeaseFunc{Name: "func.lease", TTL: time.Minute}.Do(ctx, pool, key, failing(run("lease", key), fail, errBoom))
		}, 2}, // released after each call
		{"transaction", func(key string, fail bool) (once.Outcome, error) {
			fn := runTx("transaction", key)
			return once.TransactionFunc{Name: "func.transaction"}.Do(ctx, pool, key, func(ctx context.Context, tx pgx.Tx) error {
				if fail {
					return errBoom
				}
				return fn(ctx, tx)
			})
		}, 2},
		{"operation", func(key string, fail bool) (once.Outcome, error) {
			fn := failing(run("operation", key), fail, errBoom)
			return once.OperationFunc{Name: "func.operation"}.Do(ctx, pool, once.OperationRef{Account: "acct", Reference: key},
				func(ctx context.Context, _ *once.Attempt) error { return fn(ctx) })
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

// A ForeverFunc and a Forever[struct{}] of the same name are one guard: each replays what
// the other recorded.
func TestForeverFunc_SharesItsRecordWithForeverOfNoValue(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	ran := 0
	if _, err := (once.ForeverFunc{Name: "func.shared"}).Do(ctx, pool, "k", func(context.Context) error { ran++; return nil }); err != nil {
		t.Fatal(err)
	}
	_, out, err := once.Forever[struct{}]{Name: "func.shared"}.Do(ctx, pool, "k", func(context.Context) (struct{}, error) { ran++; return struct{}{}, nil })
	if err != nil || out.Status != once.Duplicate || ran != 1 {
		t.Fatalf("Forever[struct{}] after ForeverFunc: %+v, %v, ran %d times; want a replay", out, err, ran)
	}
	if _, err := (once.ForeverFunc{Name: "func.shared"}).Do(ctx, pool, "k", nil); !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("a nil function: %v, want ErrInvalid", err)
	}
}
