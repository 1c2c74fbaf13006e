package once_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

func TestEpisode_OneFirePerEpisodeAcrossRearms(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	ctx := context.Background()
	g := once.Episode{Name: "alerts.CreditExhausted"}
	const episodes = 4
	for ep := 1; ep <= episodes; ep++ {
		key := "source/serp"
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			_, out, err := doValue(ctx, g, conn, key, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, effect(ctx, conn, "episode", fmt.Sprint(ep), caller)
			})
			if err == nil && out.Status == once.Ran && out.Firing != int64(ep) {
				t.Errorf("episode %d fired as firing %d", ep, out.Firing)
			}
			return err
		})
		if n := effects(t, pool, "episode", fmt.Sprint(ep)); n != 1 {
			t.Fatalf("episode %d: %d alerts from %d callers, want exactly 1", ep, n, stormSize)
		}
		rearmed, err := g.Rearm(ctx, pool, key)
		if err != nil || !rearmed {
			t.Fatalf("episode %d: Rearm = %v, %v; want rearmed", ep, rearmed, err)
		}
		if rearmed, err := g.Rearm(ctx, pool, key); err != nil || rearmed {
			t.Fatalf("episode %d: second Rearm = %v, %v; want nothing to rearm", ep, rearmed, err)
		}
	}
}

// The negative control: read the latch, then set it (the check and the write apart). The
// barrier holds every caller between them until all have read an armed latch, so all fire.
func TestEpisode_NegativeControl_ReadThenSetFiresEveryCaller(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	if _, err := pool.Exec(context.Background(), "INSERT INTO once.latches (name, key, fired_at, firings, token) VALUES ('alerts', 'serp', NULL, 0, 'naive')"); err != nil {
		t.Fatal(err)
	}
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var armed bool
		if err := conn.QueryRow(ctx, "SELECT fired_at IS NULL FROM once.latches WHERE name = 'alerts' AND key = 'serp'").Scan(&armed); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if !armed {
			return nil
		}
		if _, err := conn.Exec(ctx, "UPDATE once.latches SET fired_at = clock_timestamp() WHERE name = 'alerts' AND key = 'serp'"); err != nil {
			return err
		}
		return effect(ctx, conn, "episode", "serp", caller)
	})
	if n := effects(t, pool, "episode", "serp"); n != stormSize {
		t.Fatalf("%d alerts without the conditional latch, want all %d (the race this test must be able to see)", n, stormSize)
	}
}

// Inside one transaction, a second call must not fire again. The tempting "RETURNING
// fired_at = now()" says yes to both, because now() is fixed for the transaction; the
// guard's "a row back means you fired it" does not.
func TestEpisode_FiresOnceInsideOneTransaction(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	g := once.Episode{Name: "alerts"}
	var runs int
	for i := range 3 {
		_, out, err := doValue(ctx, g, tx, "serp", func(context.Context) (int, error) { runs++; return 0, nil })
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]once.Status{true: once.Ran, false: once.Duplicate}[i == 0]; out.Status != want {
			t.Fatalf("call %d in one transaction: %v, want %v", i+1, out.Status, want)
		}
	}
	if runs != 1 {
		t.Fatalf("fired %d times in one transaction", runs)
	}

	// The tempting form, for contrast: both calls in one transaction say "fired".
	naive := `INSERT INTO once.latches AS l (name, key, fired_at, firings, token) VALUES ('naive', 'serp', now(), 1, 'naive')
ON CONFLICT (name, key) DO UPDATE SET fired_at = coalesce(l.fired_at, now())
RETURNING fired_at = now()`
	yes := 0
	for range 2 {
		var fired bool
		if err := tx.QueryRow(ctx, naive).Scan(&fired); err != nil {
			t.Fatal(err)
		}
		if fired {
			yes++
		}
	}
	if yes != 2 {
		t.Fatalf("the now()-comparing latch said fired %d times in one transaction; this test expects it to be fooled twice", yes)
	}
}

// A failed alert was not sent: the latch is rearmed, so the next attempt fires.
func TestEpisode_FunctionErrorRearms(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode{Name: "alerts"}
	boom := errors.New("mail API down")
	if _, out, err := doValue(ctx, g, pool, "serp", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) || out.Status != once.Ran {
		t.Fatalf("got %v, %v; want the function's error", out.Status, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the caller")
			}
		}()
		doValue(ctx, g, pool, "serp", func(context.Context) (int, error) { panic("kaboom") })
	}()
	_, out, err := doValue(ctx, g, pool, "serp", func(context.Context) (int, error) { return 1, nil })
	if err != nil || out.Status != once.Ran || out.Firing != 3 {
		t.Fatalf("after a failure and a panic: %+v, %v; want the third firing to run", out, err)
	}
	if _, out, _ := doValue(ctx, g, pool, "serp", func(context.Context) (int, error) { return 1, nil }); out.Status != once.Duplicate {
		t.Fatalf("after a success: %v, want duplicate", out.Status)
	}
}

// The rearm after a failure is conditional on the latch still holding the failed firing: if
// the episode was rearmed and fired again meanwhile, the newer firing stands.
func TestEpisode_FailureDoesNotRearmANewerFiring(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode{Name: "alerts"}
	_, _, err := doValue(ctx, g, pool, "serp", func(ctx context.Context) (int, error) {
		if _, err := g.Rearm(ctx, pool, "serp"); err != nil {
			return 0, err
		}
		if out, err := g.Do(ctx, pool, "serp", func(context.Context) error { return nil }); err != nil || out.Status != once.Ran {
			return 0, fmt.Errorf("second firing: %v, %v", out.Status, err)
		}
		return 0, errors.New("first firing failed late")
	})
	if err == nil || err.Error() != "first firing failed late" {
		t.Fatalf("error %v", err)
	}
	var fired bool
	var firings int64
	if err := pool.QueryRow(ctx, "SELECT fired_at IS NOT NULL, firings FROM once.latches WHERE name = 'alerts' AND key = 'serp'").Scan(&fired, &firings); err != nil {
		t.Fatal(err)
	}
	if !fired || firings != 2 {
		t.Fatalf("latch fired=%v firings=%d; want the second firing left set", fired, firings)
	}
}

func TestEpisode_RearmOfAnUnknownKeyIsFalse(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	rearmed, err := (once.Episode{Name: "alerts"}).Rearm(context.Background(), pool, "never")
	if err != nil || rearmed {
		t.Fatalf("Rearm = %v, %v; want false", rearmed, err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM once.latches").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d latch rows (%v), want none", n, err)
	}
}

// Rearms racing with duplicates: while callers keep firing one key, a rearmer keeps ending
// the episode. The latch is set only from armed and rearmed only from set, so the firings
// are exactly the successful rearms plus one if the latch ends set; a duplicate answered
// from a read of the latch (no lock) must never fire, and two callers must never run the
// same firing.
func TestEpisode_RearmsRacingWithDuplicatesFireOncePerEpisode(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	g := once.Episode{Name: "alerts.CreditExhausted"}
	const rearms = 30
	var mu sync.Mutex
	handles := map[int64]int{}
	var duplicates, rearmed atomic.Int64
	done := make(chan struct{})
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		if caller == 0 { // the rearmer
			defer close(done)
			for range rearms {
				time.Sleep(2 * time.Millisecond)
				ok, err := g.Rearm(ctx, conn, "source/serp")
				if err != nil {
					return err
				}
				if ok {
					rearmed.Add(1)
				}
			}
			return nil
		}
		for {
			select {
			case <-done:
				return nil
			default:
			}
			_, out, err := doValue(ctx, g, conn, "source/serp", func(ctx context.Context) (struct{}, error) {
				return struct{}{}, effect(ctx, conn, "episode", "serp", caller)
			})
			if err != nil {
				return err
			}
			switch out.Status {
			case once.Ran:
				mu.Lock()
				handles[out.Firing]++
				mu.Unlock()
			case once.Duplicate:
				duplicates.Add(1)
			}
		}
	})
	var set bool
	var firings int64
	if err := pool.QueryRow(context.Background(), "SELECT fired_at IS NOT NULL, firings FROM once.latches WHERE name = $1 AND key = 'source/serp'", g.Name).Scan(&set, &firings); err != nil {
		t.Fatal(err)
	}
	want := rearmed.Load()
	if set {
		want++
	}
	if firings != want || int64(len(handles)) != want {
		t.Errorf("%d firings recorded, %d distinct firings ran; want %d (%d successful rearms, latch set at the end: %v)", firings, len(handles), want, rearmed.Load(), set)
	}
	for h, n := range handles {
		if n != 1 {
			t.Errorf("firing %d ran %d times", h, n)
		}
	}
	if n := effects(t, pool, "episode", "serp"); int64(n) != want {
		t.Errorf("%d alerts, want %d", n, want)
	}
	if duplicates.Load() == 0 || rearmed.Load() < 2 {
		t.Errorf("%d duplicates and %d rearms: the storm did not race them", duplicates.Load(), rearmed.Load())
	}
}

// Failures racing with duplicates: a failed alert rearms the latch (it was not sent), and
// callers that met the latch set keep trying. Until one alert is sent, the latch passes from
// one caller to the next, never to two at once: exactly one alert is sent in the end, and no
// two functions ever run at the same time.
func TestEpisode_FailuresRacingWithDuplicatesSendOneAlert(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	g := once.Episode{Name: "alerts.CreditExhausted"}
	const failures = 20
	var running, most, failed, sent atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		for sent.Load() == 0 {
			_, _, err := doValue(ctx, g, conn, "source/serp", func(ctx context.Context) (struct{}, error) {
				now := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(500 * time.Microsecond)
				if failed.Add(1) <= failures {
					return struct{}{}, errBoom
				}
				sent.Add(1)
				return struct{}{}, effect(ctx, conn, "episode", "serp", caller)
			})
			if err != nil && !errors.Is(err, errBoom) {
				return err
			}
		}
		return nil
	})
	if m := most.Load(); m != 1 {
		t.Errorf("%d alert functions ran at once, want 1", m)
	}
	if n := effects(t, pool, "episode", "serp"); n != 1 {
		t.Errorf("%d alerts sent, want 1", n)
	}
	var firings int64
	if err := pool.QueryRow(context.Background(), "SELECT firings FROM once.latches WHERE name = $1 AND key = 'source/serp'", g.Name).Scan(&firings); err != nil {
		t.Fatal(err)
	}
	if firings != failures+1 {
		t.Errorf("%d firings, want the %d failed ones and the one sent", firings, failures+1)
	}
}

// A duplicate reads the set latch without a lock: it answers while another transaction holds
// the row locked. The guard's earlier form, the conditional upsert alone, waits for that lock
// (ON CONFLICT .. DO UPDATE locks the row even when its WHERE refuses): the negative control.
func TestEpisode_DuplicateTakesNoLock(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode{Name: "alerts"}
	if _, out, err := doValue(ctx, g, pool, "serp", func(context.Context) (int, error) { return 0, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("firing: %v, %v", out.Status, err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT * FROM once.latches WHERE name = 'alerts' AND key = 'serp' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, out, err := doValue(lctx, g, pool, "serp", func(context.Context) (int, error) { t.Error("fired a set latch"); return 0, nil })
	if err != nil || out.Status != once.Duplicate {
		t.Fatalf("Do on a set latch locked by another transaction: %v, %v; want a duplicate without waiting", out.Status, err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET lock_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET lock_timeout")
	_, err = conn.Exec(ctx, `INSERT INTO once.latches AS l (name, key, fired_at, firings, token) VALUES ('alerts', 'serp', clock_timestamp(), 1, 'bare')
ON CONFLICT (name, key) DO UPDATE SET fired_at = clock_timestamp(), firings = l.firings + 1 WHERE l.fired_at IS NULL`)
	if pgErrCode(err) != "55P03" {
		t.Fatalf("the conditional upsert alone on the locked set latch: %v; want it to wait for the lock (55P03 after lock_timeout)", err)
	}
}
