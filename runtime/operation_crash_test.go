package once_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
)

// An Operation's holder SIGKILLed mid-effect, with the defaults on a pool: the next call for
// the same reference is told the outcome is uncertain within a minute (the operation's
// window is the forever guard's, 45 s from the last sign of life), not after 20 minutes,
// and the function does not run again.
func TestOperation_KilledHolderIsNoticedWithinAMinuteByDefault(t *testing.T) {
	op := once.Operation[string]{Name: "reports.generate"}
	ref := once.OperationRef{Account: "acct_1", Reference: "r-1", Input: map[string]int{"pages": 3}}
	if crashtest.IsChild(t) {
		pool, err := pgxpool.New(context.Background(), os.Getenv(envForeverDSN))
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		op.Do(context.Background(), pool, ref, func(ctx context.Context, _ *once.Attempt) (string, error) {
			if err := effect(ctx, pool, "operation", "r-1", 1); err != nil {
				t.Fatalf("child: %v", err)
			}
			crashtest.Ready("")
			return "", nil
		})
	}
	t.Parallel()
	pool, child := startForeverChild(t, nil)
	ctx := context.Background()
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for {
		_, out, err := op.Do(ctx, pool, ref, func(context.Context, *once.Attempt) (string, error) {
			t.Error("the function ran again after its holder died")
			return "", nil
		})
		waited := time.Since(killed)
		if errors.Is(err, once.ErrInFlight) {
			if waited > time.Minute {
				t.Fatalf("still in flight %v after the holder was killed", waited)
			}
			time.Sleep(time.Second)
			continue
		}
		if !errors.Is(err, once.ErrUncertain) || waited > time.Minute {
			t.Fatalf("after %v: %+v, %v; want uncertain within a minute", waited, out, err)
		}
		t.Logf("noticed %v after the kill", waited.Round(time.Second))
		break
	}
	if n := effects(t, pool, "operation", "r-1"); n != 1 {
		t.Fatalf("%d effects, want the dead holder's 1", n)
	}
}
