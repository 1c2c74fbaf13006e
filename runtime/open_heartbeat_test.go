package once_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
)

// A holder SIGKILLed mid-effect, with the guard's defaults on a pool: its claim shows no more
// life, and a later caller claims the key again (Open's takeover: the work is open no more)
// within a minute, since the window of a claim Do keeps alive is 45 s from its last sign of
// life, not 20 minutes.
func TestOpen_KilledHolderIsNoticedWithinAMinuteByDefault(t *testing.T) {
	g := once.Open{Name: "research.StartRun"}
	if crashtest.IsChild(t) {
		pool, err := pgxpool.New(context.Background(), os.Getenv(envCrashDSN))
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		doValue(context.Background(), g, pool, "org/1", func(ctx context.Context) (string, error) {
			if err := effect(ctx, pool, "open", "org/1", 1); err != nil {
				t.Fatalf("child: %v", err)
			}
			c, _ := once.ClaimFrom(ctx)
			crashtest.Ready(fmt.Sprint(c.ID))
			return "", nil
		})
	}
	t.Parallel()
	pool, child := startChild(t)
	ctx := context.Background()
	dead := payloadID(t, child.Payload)
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var window string
	if err := pool.QueryRow(ctx, "SELECT stale_after::text FROM once.open_claims WHERE id = $1::text::bigint", dead).Scan(&window); err != nil || window != "00:00:45" {
		t.Fatalf("the dead claim's window: %q, %v; want 45 s", window, err)
	}
	for {
		_, out, err := doValue(ctx, g, pool, "org/1", func(ctx context.Context) (string, error) {
			return "", effect(ctx, pool, "open", "org/1", 2)
		})
		waited := time.Since(killed)
		if err != nil {
			t.Fatal(err)
		}
		if out.Status == once.InFlight {
			if out.Holder != dead {
				t.Fatalf("in flight at %s, want the dead claim %s", out.Holder, dead)
			}
			if waited > time.Minute {
				t.Fatalf("still in flight %v after the holder was killed", waited)
			}
			time.Sleep(time.Second)
			continue
		}
		if out.Status != once.Ran || waited > time.Minute {
			t.Fatalf("after %v: %+v; want the key claimed again within a minute", waited, out)
		}
		t.Logf("noticed %v after the kill", waited.Round(time.Second))
		break
	}
	if s := claimState(t, pool, dead); s.state != "stale" {
		t.Fatalf("dead claim is %q, want stale", s.state)
	}
	if n := effects(t, pool, "open", "org/1"); n != 2 {
		t.Fatalf("%d runs, want the dead holder's and the takeover's", n)
	}
}

// The 45 s default belongs to claims a heartbeat keeps alive: a claim made by Claim (for a
// job queue) or by Do on one connection or with NoHeartbeat shows no life while it is open,
// and keeps DefaultStale, whoever finds it later.
func TestOpen_OnlyAClaimWithAHeartbeatHasTheShortDefaultWindow(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	window := func(fn func(key string) (*once.Claim, error)) string {
		t.Helper()
		key := t.Name() + fmt.Sprint(time.Now().UnixNano())
		c, err := fn(key)
		if err != nil || c == nil {
			t.Fatalf("claim: %v, %v", c, err)
		}
		var w string
		if err := pool.QueryRow(ctx, "SELECT stale_after::text FROM once.open_claims WHERE id = $1", c.ID).Scan(&w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	inDo := func(g once.Open, db once.DB) func(string) (*once.Claim, error) {
		return func(key string) (*once.Claim, error) {
			var c *once.Claim
			_, _, err := doValue(ctx, g, db, key, func(ctx context.Context) (int, error) {
				c, _ = once.ClaimFrom(ctx)
				return 0, nil
			})
			return c, err
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	g := once.Open{Name: "exports.Enqueue"}
	for _, c := range []struct {
		what string
		fn   func(string) (*once.Claim, error)
		want string
	}{
		{"Do on a pool", inDo(g, pool), "00:00:45"},
		{"Do on a pool, NoHeartbeat", inDo(once.Open{Name: g.Name, NoHeartbeat: true}, pool), "00:20:00"},
		{"Do on one connection", inDo(g, conn.Conn()), "00:20:00"},
		{"Claim", func(key string) (*once.Claim, error) { c, _, err := g.Claim(ctx, pool, key); return c, err }, "00:20:00"},
		{"Do on a pool, Stale set", inDo(once.Open{Name: g.Name, Stale: time.Hour}, pool), "01:00:00"},
	} {
		if got := window(c.fn); got != c.want {
			t.Errorf("%s: window %s, want %s", c.what, got, c.want)
		}
	}
}

// A function that runs longer than Stale on a pool keeps its claim: a caller arriving after
// Stale is redirected to it, and the work runs once. The negative control has no heartbeat:
// the caller takes the living holder for dead, claims again and runs the work a second
// time, and the first holder's settle is refused.
func TestOpen_HeartbeatKeepsALongFunctionItsClaim(t *testing.T) {
	t.Parallel()
	pool := setup(t, 6)
	const stale = 2 * time.Second
	for _, heartbeat := range []bool{true, false} {
		name := map[bool]string{true: "heartbeat", false: "negative control: no heartbeat"}[heartbeat]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			g := once.Open{Name: "reports.Render", Stale: stale, NoHeartbeat: !heartbeat}
			key := name
			var wg sync.WaitGroup
			var firstErr error
			wg.Go(func() {
				_, _, firstErr = doValue(ctx, g, pool, key, func(ctx context.Context) (int, error) {
					time.Sleep(2*stale + stale/2)
					return 1, effect(ctx, pool, "render", key, 1)
				})
			})
			time.Sleep(stale + stale/2)
			_, out, err := doValue(ctx, g, pool, key, func(ctx context.Context) (int, error) {
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

// A heartbeat that finds its claim closed cancels the function's context with a cause
// wrapping ErrNotOwner; without one, nothing tells the function.
func TestOpen_HeartbeatLosingTheClaimCancelsTheFunction(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	for _, heartbeat := range []bool{true, false} {
		t.Run(map[bool]string{true: "heartbeat", false: "negative control: no heartbeat"}[heartbeat], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			g := once.Open{Name: "reports.Render", Stale: 300 * time.Millisecond, NoHeartbeat: !heartbeat}
			errNeverTold := errors.New("the function was never told")
			var fnErr error
			_, out, err := doValue(ctx, g, pool, t.Name(), func(ctx context.Context) (int, error) {
				c, _ := once.ClaimFrom(ctx)
				if _, err := pool.Exec(ctx, `UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(), reason = 'closed by an operator' WHERE id = $1`, c.ID); err != nil {
					return 0, err
				}
				fnErr = causeWithin(ctx, 3*time.Second, errNeverTold)
				return 0, fnErr
			})
			if out.Status != once.Ran || !errors.Is(err, once.ErrNotOwner) {
				t.Fatalf("%+v %v, want Ran, and the settle refused (ErrNotOwner)", out, err)
			}
			if heartbeat != errors.Is(fnErr, once.ErrNotOwner) || heartbeat == errors.Is(fnErr, errNeverTold) {
				t.Fatalf("the function ended with %v", fnErr)
			}
		})
	}
}

// The heartbeat costs a short function nothing: a fresh key is its claim and its settle,
// two statements. A function that outlives Stale/3 gets heartbeats (the control, which
// shows the counter would see them).
func TestOpen_ShortFunctionSendsNoHeartbeat(t *testing.T) {
	t.Parallel()
	pool, trips := setupTraced(t)
	ctx := context.Background()
	once.SetOpenDuplicateShare("reports.Short", 0)
	g := once.Open{Name: "reports.Short"}
	for i := range 20 {
		if _, _, err := doValue(ctx, g, pool, fmt.Sprint("k", i), func(context.Context) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, statements := trips.take(); statements != 40 {
		t.Fatalf("%d statements for 20 short calls, want 40 (claim and finish each)", statements)
	}
	long := once.Open{Name: "reports.Short", Stale: 300 * time.Millisecond}
	// It outlives the interval (100 ms) ten times, so that two beats land even when a loaded
	// machine delays some.
	if _, _, err := doValue(ctx, long, pool, "long", func(context.Context) (int, error) { time.Sleep(time.Second); return 0, nil }); err != nil {
		t.Fatal(err)
	}
	if _, statements := trips.take(); statements < 4 {
		t.Fatalf("%d statements for a call outliving Stale/3 ten times, want its heartbeats beside claim and finish", statements)
	}
}
