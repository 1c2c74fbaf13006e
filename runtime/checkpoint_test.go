package once_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
)

// buildReport is a three-step operation; each step writes an effect row in its own
// transaction. stop, when non-nil, is called inside the last step's transaction, after its
// write and before its commit.
func buildReport(db once.DB, caller int, stop func(a *once.Attempt)) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		a, _ := once.AttemptFrom(ctx)
		step := func(name string, state func() string) (string, error) {
			return once.Step(ctx, db, a, name, func(ctx context.Context, tx pgx.Tx) (string, error) {
				if err := effect(ctx, tx, "step", name, caller); err != nil {
					return "", err
				}
				if name == "publish" && stop != nil {
					stop(a)
				}
				return state(), nil
			})
		}
		rows, err := step("extract", func() string { return "rows-by-" + strconv.Itoa(caller) })
		if err != nil {
			return "", err
		}
		pdf, err := step("render", func() string { return "pdf-by-" + strconv.Itoa(caller) })
		if err != nil {
			return "", err
		}
		url, err := step("publish", func() string { return "url-by-" + strconv.Itoa(caller) })
		return rows + "," + pdf + "," + url, err
	}
}

// A worker SIGKILLed inside its third step: the first two steps committed with their
// checkpoints, the third rolled back with the process. The retry resumes after the second.
func TestStep_KilledWorkerResumesFromTheLastCheckpoint(t *testing.T) {
	g := once.Forever{Name: "reports.Build", Stale: crashStale, RepeatSafe: true}
	if crashtest.IsChild(t) {
		c := connectForeverChild(t)
		once.ForeverValue(context.Background(), c.conn, g, once.Ref{Key: "report/1"}, buildReport(c.conn, 1, func(a *once.Attempt) {
			crashtest.Ready(a.ID())
		}))
		t.Fatal("child: the operation returned instead of stopping in its last step")
	}
	t.Parallel()
	pool, child := startForeverChild(t, nil)
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := operationState(t, pool, payloadID(t, child.Payload)); r.state != "open" || r.recoveryPoint != "render" {
		t.Fatalf("after the kill: %+v, want open with recovery point render", r)
	}
	time.Sleep(crashStale + 100*time.Millisecond)
	v, out, err := once.ForeverValue(context.Background(), pool, g, once.Ref{Key: "report/1"}, buildReport(pool, 2, nil))
	if err != nil || out.Status != once.Ran {
		t.Fatalf("retry: %+v, %v", out, err)
	}
	if want := "rows-by-1,pdf-by-1,url-by-2"; v != want {
		t.Fatalf("result %q, want %q: the first two steps' states recovered from the dead worker", v, want)
	}
	for _, s := range []string{"extract", "render", "publish"} {
		if n := effects(t, pool, "step", s); n != 1 {
			t.Errorf("step %s wrote %d times, want once", s, n)
		}
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" || r.attempts != 2 {
		t.Fatalf("operation %+v, want done on attempt 2", r)
	}
}

// The same recovery after a retryable failure, and its negative control: without Step, the
// retry does every step again.
func TestStep_RetryResumesAfterTheLastCheckpoint(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Build"}
	failing := buildReport(pool, 1, func(*once.Attempt) {})
	attempt1 := func(ctx context.Context) (string, error) {
		if _, err := failing(ctx); err != nil {
			return "", err
		}
		return "", errors.New("provider timed out after the last step") // retryable
	}
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "report/2"}, attempt1); err == nil {
		t.Fatal("attempt 1 succeeded")
	}
	v, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "report/2"}, buildReport(pool, 2, nil))
	if err != nil || v != "rows-by-1,pdf-by-1,url-by-1" {
		t.Fatalf("retry: %q, %v; want every step recovered", v, err)
	}
	for _, s := range []string{"extract", "render", "publish"} {
		if n := effects(t, pool, "step", s); n != 1 {
			t.Errorf("step %s wrote %d times, want once", s, n)
		}
	}

	// Negative control: the same steps without checkpoints are all done again.
	plain := func(ctx context.Context) (string, error) {
		for _, s := range []string{"extract", "render", "publish"} {
			if err := effect(ctx, pool, "plain", s, 0); err != nil {
				return "", err
			}
		}
		return "", nil
	}
	g2 := once.Forever{Name: "reports.Plain"}
	once.ForeverValue(ctx, pool, g2, once.Ref{Key: "report/2"}, func(ctx context.Context) (string, error) {
		plain(ctx)
		return "", errors.New("timed out")
	})
	once.ForeverValue(ctx, pool, g2, once.Ref{Key: "report/2"}, plain)
	if n := effects(t, pool, "plain", "extract"); n != 2 {
		t.Fatalf("without checkpoints extract wrote %d times, want 2: the control must show the repeat", n)
	}
}

func TestCheckpoint_RecordsNothingForAReplacedAttempt(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever{Name: "reports.Build", Stale: 100 * time.Millisecond, RepeatSafe: true, NoHeartbeat: true}
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "report/3"}, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		time.Sleep(250 * time.Millisecond)
		// Meanwhile another caller takes the silent claim over.
		if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "report/3"}, func(context.Context) (int, error) { return 2, nil }); err != nil || out.Status != once.Ran {
			t.Errorf("takeover: %+v, %v", out, err)
		}
		_, err := once.Step(ctx, pool, a, "late", func(ctx context.Context, tx pgx.Tx) (int, error) {
			return 1, effect(ctx, tx, "step", "late", 1)
		})
		if !errors.Is(err, once.ErrNotOwner) {
			t.Errorf("late step: %v, want ErrNotOwner", err)
		}
		if err := a.Heartbeat(ctx); !errors.Is(err, once.ErrNotOwner) {
			t.Errorf("late heartbeat: %v, want ErrNotOwner", err)
		}
		return 1, nil
	})
	if n := effects(t, pool, "step", "late"); n != 0 {
		t.Fatalf("the replaced attempt's step committed %d writes, want 0 (rolled back with its checkpoint)", n)
	}
	if v, _, _ := once.ForeverValue(ctx, pool, g, once.Ref{Key: "report/3"}, func(context.Context) (int, error) { return 3, nil }); v != 2 {
		t.Fatalf("recorded result %d, want the new attempt's 2", v)
	}
}

// A step whose context is cancelled (the request went away) rolls back, and the connection
// survives it: the operation is then recorded on that same connection. pgx closes a
// connection whose rollback fails, so a rollback sent on the cancelled context would lose
// the connection and leave the operation open.
func TestStep_CancelledStepRollsBackAndTheOperationSettles(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	conn := c.Conn()
	g := once.Forever{Name: "reports.Build"}
	_, out, err := once.ForeverValue(ctx, conn, g, once.Ref{Key: "report/4"}, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		sctx, cancel := context.WithCancel(ctx)
		return once.Step(sctx, conn, a, "extract", func(ctx context.Context, tx pgx.Tx) (int, error) {
			if err := effect(ctx, tx, "step", "extract", 1); err != nil {
				return 0, err
			}
			cancel()
			return 0, ctx.Err()
		})
	})
	if !errors.Is(err, context.Canceled) || out.Status != once.Ran || errors.Is(err, once.ErrNotOwner) || strings.Contains(err.Error(), "recording") {
		t.Fatalf("%+v %v, want the step's own error alone", out, err)
	}
	if conn.IsClosed() {
		t.Fatal("the connection was closed by the cancelled step's rollback")
	}
	if r := operationState(t, pool, out.Claim); r.state != "released" {
		t.Fatalf("operation %+v, want released: the attempt's outcome recorded", r)
	}
	if n := effects(t, pool, "step", "extract"); n != 0 {
		t.Fatalf("%d writes of the cancelled step lasted, want 0", n)
	}
}
