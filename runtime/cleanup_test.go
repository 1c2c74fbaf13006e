package once_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// deadlineCalls is how many calls of each kind the deadline storms make.
const deadlineCalls = 300

// stormWorkers is how many callers the deadline storms run at once.
const stormWorkers = 8

// claimRoundTrip measures the median round trip of a bare forever claim on a fresh key, the
// statement whose answer a short deadline loses, sent by stormWorkers callers at once as in
// the storms.
func claimRoundTrip(t *testing.T, pool *pgxpool.Pool) time.Duration {
	t.Helper()
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	for w := range stormWorkers {
		wg.Go(func() {
			for i := range 25 {
				key := fmt.Sprint(w, "/", i)
				start := time.Now()
				if _, err := pool.Exec(context.Background(), once.ForeverClaimSQL, "rtt", "", key, once.NewOperationID(), key, nil, nil); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				times = append(times, time.Since(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if _, err := pool.Exec(context.Background(), "DELETE FROM once.operations WHERE name = 'rtt'"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// deadlineStorm makes n calls of call, on workers goroutines, the i-th with a deadline of
// (0.2 + 2.8·i/(n-1)) round trips, and returns how many ended in their context's error.
func deadlineStorm(n, workers int, rtt time.Duration, call func(ctx context.Context, i int) error) (cancelled int64, err error) {
	var next, ended atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				d := time.Duration(float64(rtt) * (0.2 + 2.8*float64(i)/float64(n-1)))
				ctx, cancel := context.WithTimeout(context.Background(), d)
				err := call(ctx, i)
				cancel()
				switch {
				case errors.Is(err, context.DeadlineExceeded) && strings.Contains(err.Error(), "clean-up"):
					// The clean-up itself failed (it could not reach the database within its
					// bound): the stale window is then the backstop, and this storm's
					// assertion cannot hold. Say so rather than count a stuck key.
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("call %d: the clean-up did not finish: %w", i, err)
					}
					mu.Unlock()
				case errors.Is(err, context.DeadlineExceeded):
					ended.Add(1)
				case err != nil:
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("call %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return ended.Load(), firstErr
}

// unseenKind is one guard kind in the deadline storms: how to call it, how many of its keys
// are left open, and what a later call of a key must do.
type unseenKind struct {
	name string
	// call calls the guard for key i; fn counts the runs of each key.
	call func(ctx context.Context, pool *pgxpool.Pool, i int, runs []atomic.Int32) (once.Outcome, error)
	// openSQL counts the guard's keys held open ($1 is the guard's name).
	openSQL string
	// runsOnce: a later call replays a key that ran (forever); otherwise it runs again.
	runsOnce bool
}

var unseenKinds = []unseenKind{
	{
		name: "forever",
		call: func(ctx context.Context, pool *pgxpool.Pool, i int, runs []atomic.Int32) (once.Outcome, error) {
			g := once.Forever{Name: "unseen.forever"}
			_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: fmt.Sprint("k", i)}, func(context.Context) (int, error) { runs[i].Add(1); return i, nil })
			return out, err
		},
		openSQL:  `SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'open'`,
		runsOnce: true,
	},
	{
		name: "forever-scoped",
		call: func(ctx context.Context, pool *pgxpool.Pool, i int, runs []atomic.Int32) (once.Outcome, error) {
			op := once.Forever{Name: "unseen.forever-scoped", Retain: 24 * time.Hour}
			ref := once.Ref{Scope: once.MustKey("acct"), Key: once.MustKey(fmt.Sprint("r", i)), Input: map[string]int{"i": i}}
			_, out, err := once.ForeverValue(ctx, pool, op, ref, func(context.Context) (int, error) { runs[i].Add(1); return i, nil })
			return out, err
		},
		openSQL:  `SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'open'`,
		runsOnce: true,
	},
	{
		name: "open",
		call: func(ctx context.Context, pool *pgxpool.Pool, i int, runs []atomic.Int32) (once.Outcome, error) {
			g := once.Open{Name: "unseen.open"}
			return g.Do(ctx, pool, fmt.Sprint("k", i), func(context.Context) error { runs[i].Add(1); return nil })
		},
		openSQL: `SELECT count(*) FROM once.open_claims WHERE name = $1 AND state = 'open'`,
	},
	{
		name: "lease",
		call: func(ctx context.Context, pool *pgxpool.Pool, i int, runs []atomic.Int32) (once.Outcome, error) {
			g := once.Lease{Name: "unseen.lease", TTL: time.Hour}
			return g.Do(ctx, pool, fmt.Sprint("k", i), func(context.Context) error { runs[i].Add(1); return nil })
		},
		openSQL: `SELECT count(*) FROM once.leases WHERE name = $1 AND released_at IS NULL AND expires_at > clock_timestamp()`,
	},
}

// lateRecheckEnd is past the last withdrawal the clean-up repeats in the background behind a
// pooler (at 2 s from its first look).
const lateRecheckEnd = 3 * time.Second

// cancelledStorm runs deadlineCalls calls of call with deadlines spread around rtt, fails
// the test if one ends otherwise than by its deadline (a call that ran must return no
// error), and returns once every clean-up, the repeats behind a pooler included, is done.
func cancelledStorm(t *testing.T, rtt time.Duration, call func(ctx context.Context, i int) (once.Outcome, error)) {
	t.Helper()
	cancelled, err := deadlineStorm(deadlineCalls, stormWorkers, rtt, func(ctx context.Context, i int) error {
		out, err := call(ctx, i)
		if out.Status == once.Ran && err != nil {
			// Not the claim's deadline: what follows the function, on its own context, failed.
			return fmt.Errorf("ran, but returned %v", err)
		}
		return err
	})
	if err != nil {
		t.Fatalf("a call failed otherwise than by its deadline: %v", err)
	}
	t.Logf("%d of %d calls ended by their deadline", cancelled, deadlineCalls)
	if _, pooled := pgtest.Pooled(); pooled {
		time.Sleep(lateRecheckEnd)
	} else {
		time.Sleep(time.Second)
	}
}

// openKeys counts kind's keys held open, by nobody: every call has returned.
func openKeys(t *testing.T, pool *pgxpool.Pool, k unseenKind) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), k.openSQL, "unseen."+k.name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A caller whose deadline fires while its claim is in flight does not know whether the claim
// landed; the guard finds out and withdraws it, so no key is left open by a caller that
// never ran the work. 300 calls per kind, with deadlines from a fifth of a claim's round
// trip to three: a second later no key is open, and every key's next call runs (or, for a
// forever key that ran, replays), with no key's work done twice.
//
// The kinds storm at once, each on a database of its own: behind PgBouncer every cancelled
// call costs a new server connection, which the pooler opens one at a time per database.
func TestUnseenClaim_CancelledCallersLeaveNoKeyOpen(t *testing.T) {
	t.Parallel()
	rtt := claimRoundTrip(t, setup(t, 12))
	t.Logf("a claim's round trip: %v", rtt)
	for _, k := range unseenKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 12)
			runs := make([]atomic.Int32, deadlineCalls)
			cancelledStorm(t, rtt, func(ctx context.Context, i int) (once.Outcome, error) { return k.call(ctx, pool, i, runs) })
			if n := openKeys(t, pool, k); n != 0 {
				t.Fatalf("%d keys left open with no caller running them", n)
			}
			for i := range deadlineCalls {
				before := runs[i].Load()
				out, err := k.call(context.Background(), pool, i, runs)
				if err != nil {
					t.Fatalf("key %d: the next call: %+v, %v", i, out, err)
				}
				switch {
				case k.runsOnce && before == 1 && out.Status != once.Duplicate:
					t.Fatalf("key %d ran once already; the next call got %v, want a replay", i, out.Status)
				case (!k.runsOnce || before == 0) && out.Status != once.Ran:
					t.Fatalf("key %d: the next call got %v, want it to run", i, out.Status)
				}
				if k.runsOnce && runs[i].Load() != 1 {
					t.Fatalf("key %d ran %d times, want once", i, runs[i].Load())
				}
			}
		})
	}
}

// The negative control: the same storm sends the bare claim, as the guard sends it but with
// no clean-up after a lost answer. Some callers' deadlines fire after their claim reached
// the server: their keys are left open, for work that never ran, until the stale window
// (20 minutes by default), and the guard answers them in flight.
func TestUnseenClaim_NegativeControl_TheBareClaimLeavesKeysOpen(t *testing.T) {
	t.Parallel()
	pool := setup(t, 12)
	rtt := claimRoundTrip(t, pool)
	g := once.Forever{Name: "unseen.bare"}
	// A lost answer is a matter of timing: a few calls in 300 meet it. Storm again, on
	// fresh keys, until one does.
	for round := range 5 {
		key := func(i int) string { return fmt.Sprint("r", round, "/k", i) }
		var cut []int
		var mu sync.Mutex
		deadlineStorm(deadlineCalls, stormWorkers, rtt, func(ctx context.Context, i int) error {
			_, err := pool.Exec(ctx, once.ForeverClaimSQL, g.Name, "", key(i), once.NewOperationID(), "bare", nil, nil)
			if err != nil {
				mu.Lock()
				cut = append(cut, i)
				mu.Unlock()
			}
			return err
		})
		time.Sleep(time.Second)
		stuck := 0
		for _, i := range cut {
			// A cut-off claim that did not land leaves its key free: the guard runs it.
			out, err := g.Do(context.Background(), pool, once.Ref{Key: key(i)}, func(context.Context) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if out.Status == once.InFlight {
				stuck++
			}
		}
		if stuck == 0 {
			continue
		}
		t.Logf("round %d: %d of the %d callers cut off left their key open", round+1, stuck, len(cut))
		return
	}
	t.Fatal("five storms of bare claims with deadlines left no key open: the storm does not reach the window the clean-up closes")
}

// The clean-up finds an unseen claim's server process by the pid pgx holds, which behind
// PgBouncer is the pooler's own: it must tell the two apart, or it would look for a process
// that never existed and withdraw before the claim commits.
func TestUnseenClaim_CleanupTellsAPoolerApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewPooledDatabase(t, "exec")
	for _, c := range []struct {
		name, url string
		want      bool
	}{{"direct", db.DirectURL, false}, {"through PgBouncer", db.URL, true}} {
		conn, err := pgx.Connect(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := once.BehindPooler(ctx, conn)
		conn.Close(ctx)
		if err != nil || got != c.want {
			t.Errorf("%s: behind a pooler = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// Behind a pooler the server may read a claim after the clean-up's first look, so the
// clean-up repeats its withdrawal. A claim that lands 150 ms after that first look is taken
// back by a repeat; with no repeats (the control), it stays open.
func TestUnseenClaim_RepeatsTakeBackAClaimThatLandsLate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := setup(t, 4)
	for _, c := range []struct {
		name    string
		repeats []time.Duration
		want    bool
	}{{"repeated", nil, true}, {"not repeated", []time.Duration{}, false}} {
		t.Run(c.name, func(t *testing.T) {
			key, token := "late-"+c.name, "token-"+c.name
			landed := make(chan error, 1)
			go func() {
				time.Sleep(150 * time.Millisecond)
				_, err := pool.Exec(ctx, once.OpenClaimSQL, "unseen.late", key, token, int64(time.Hour/time.Microsecond))
				landed <- err
			}()
			found, err := once.RecheckOpen(ctx, pool, "unseen.late", key, token, c.repeats)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-landed; err != nil {
				t.Fatal(err)
			}
			var open int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.open_claims WHERE name = 'unseen.late' AND key = $1 AND state = 'open'`, key).Scan(&open); err != nil {
				t.Fatal(err)
			}
			if found != c.want || (open == 0) != c.want {
				t.Fatalf("a repeat found the claim: %v; claims left open: %d; want found %v", found, open, c.want)
			}
		})
	}
}
