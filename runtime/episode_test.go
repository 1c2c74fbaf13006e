package once_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

func TestEpisode_OneFirePerEpisodeAcrossRearms(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	ctx := context.Background()
	g := once.Episode[struct{}]{Name: "alerts.CreditExhausted"}
	const episodes = 4
	for ep := 1; ep <= episodes; ep++ {
		key := "source/serp"
		storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
			_, out, err := g.Do(ctx, conn, key, func(ctx context.Context) (struct{}, error) {
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
	if _, err := pool.Exec(context.Background(), "INSERT INTO once.latches (name, key, fired_at, firings) VALUES ('alerts', 'serp', NULL, 0)"); err != nil {
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
	g := once.Episode[int]{Name: "alerts"}
	var runs int
	for i := range 3 {
		_, out, err := g.Do(ctx, tx, "serp", func(context.Context) (int, error) { runs++; return 0, nil })
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
	naive := `INSERT INTO once.latches AS l (name, key, fired_at, firings) VALUES ('naive', 'serp', now(), 1)
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
	g := once.Episode[int]{Name: "alerts"}
	boom := errors.New("mail API down")
	if _, out, err := g.Do(ctx, pool, "serp", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) || out.Status != once.Ran {
		t.Fatalf("got %v, %v; want the function's error", out.Status, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the caller")
			}
		}()
		g.Do(ctx, pool, "serp", func(context.Context) (int, error) { panic("kaboom") })
	}()
	_, out, err := g.Do(ctx, pool, "serp", func(context.Context) (int, error) { return 1, nil })
	if err != nil || out.Status != once.Ran || out.Firing != 3 {
		t.Fatalf("after a failure and a panic: %+v, %v; want the third firing to run", out, err)
	}
	if _, out, _ := g.Do(ctx, pool, "serp", func(context.Context) (int, error) { return 1, nil }); out.Status != once.Duplicate {
		t.Fatalf("after a success: %v, want duplicate", out.Status)
	}
}

// The rearm after a failure is conditional on the latch still holding the failed firing: if
// the episode was rearmed and fired again meanwhile, the newer firing stands.
func TestEpisode_FailureDoesNotRearmANewerFiring(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Episode[int]{Name: "alerts"}
	_, _, err := g.Do(ctx, pool, "serp", func(ctx context.Context) (int, error) {
		if _, err := g.Rearm(ctx, pool, "serp"); err != nil {
			return 0, err
		}
		if _, out, err := g.Do(ctx, pool, "serp", func(context.Context) (int, error) { return 2, nil }); err != nil || out.Status != once.Ran {
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
	rearmed, err := (once.Episode[int]{Name: "alerts"}).Rearm(context.Background(), pool, "never")
	if err != nil || rearmed {
		t.Fatalf("Rearm = %v, %v; want false", rearmed, err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM once.latches").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d latch rows (%v), want none", n, err)
	}
}
