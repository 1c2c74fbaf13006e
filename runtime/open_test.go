package once_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// backdate makes an open claim older by age, as if its worker had stalled that long:
// faster than sleeping through a window, and not at the mercy of a loaded machine.
func backdate(t *testing.T, db once.DB, id int64, age time.Duration) {
	t.Helper()
	if _, err := db.Exec(context.Background(), `UPDATE once.open_claims SET opened_at = opened_at - $2::bigint * interval '1 microsecond',
	alive_at = alive_at - $2::bigint * interval '1 microsecond' WHERE id = $1`, id, age.Microseconds()); err != nil {
		t.Fatal(err)
	}
}

type claimRow struct {
	state, reason string
}

// claimState reads the claim id (a *Claim's ID, or an Outcome's Claim or Holder).
func claimState(t *testing.T, db once.DB, id any) claimRow {
	t.Helper()
	var r claimRow
	var reason *string
	if err := db.QueryRow(context.Background(), "SELECT state, reason FROM once.open_claims WHERE id = $1::text::bigint", fmt.Sprint(id)).Scan(&r.state, &reason); err != nil {
		t.Fatal(err)
	}
	if reason != nil {
		r.reason = *reason
	}
	return r
}

// The storm runs twice: from a guard whose claims have met no open claim (each sends the
// claim alone, then reads, until duplicates make it read first) and from one whose claims
// keep meeting open claims (each reads the key's open claim and claims only when it sees
// none).
func TestOpen_ConcurrentStartsRunOnceAndRedirectToTheOpenClaim(t *testing.T) {
	t.Parallel()
	for _, share := range []float64{0, 1} {
		t.Run(fmt.Sprintf("duplicate share %v", share), func(t *testing.T) {
			t.Parallel()
			g := once.Open{Name: fmt.Sprintf("research.StartRun%v", share)}
			once.SetOpenDuplicateShare(g.Name, share)
			openStorm(t, g)
		})
	}
}

func openStorm(t *testing.T, g once.Open) {
	pool := setup(t, stormConns)
	var redirected atomic.Int64
	allRedirected := make(chan struct{})
	var winner atomic.Int64
	handles := make([]string, stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		_, out, err := doValue(ctx, g, conn, "org/1", func(ctx context.Context) (int64, error) {
			c, ok := once.ClaimFrom(ctx)
			if !ok {
				t.Error("no claim in the function's context")
				return 0, nil
			}
			winner.Store(c.ID)
			// Keep the work open until every other caller has been redirected to it.
			select {
			case <-allRedirected:
			case <-time.After(20 * time.Second):
			}
			return c.ID, effect(ctx, conn, "open", "org/1", caller)
		})
		handles[caller] = out.Claim + out.Holder // one of the two, by status
		if out.Status == once.InFlight && redirected.Add(1) == stormSize-1 {
			close(allRedirected)
		}
		return err
	})
	if n := effects(t, pool, "open", "org/1"); n != 1 {
		t.Fatalf("%d runs started by %d concurrent callers, want exactly 1", n, stormSize)
	}
	if got := redirected.Load(); got != stormSize-1 {
		t.Fatalf("%d callers redirected, want %d", got, stormSize-1)
	}
	want := strconv.FormatInt(winner.Load(), 10)
	for i, h := range handles {
		if h != want {
			t.Fatalf("caller %d got handle %s, want the open claim %s", i, h, want)
		}
	}
	if s := claimState(t, pool, winner.Load()); s.state != "done" {
		t.Fatalf("the run's claim is %q, want done", s.state)
	}
}

// The negative control: look for an open run, then insert one, in a table with no partial
// unique index. The barrier holds every caller between the look and the insert until all
// have looked, so every one of them starts a run.
func TestOpen_NegativeControl_CheckThenInsertWithoutTheIndexStartsEveryCaller(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	if _, err := pool.Exec(context.Background(), "CREATE TABLE runs (org text NOT NULL, status text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	b := newBarrier(stormSize)
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		var open int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM runs WHERE org = 'org/1' AND status = 'open'").Scan(&open); err != nil {
			return err
		}
		if err := b.wait(ctx); err != nil {
			return err
		}
		if open > 0 {
			return nil
		}
		if _, err := conn.Exec(ctx, "INSERT INTO runs VALUES ('org/1', 'open')"); err != nil {
			return err
		}
		return effect(ctx, conn, "open", "org/1", caller)
	})
	if n := effects(t, pool, "open", "org/1"); n != stormSize {
		t.Fatalf("%d runs without the index, want all %d (the race this test must be able to see)", n, stormSize)
	}
}

// Once the work finishes (done or failed), the next caller starts new work; the finished
// claims stay as history.
func TestOpen_AgainAfterTheWorkFinishes(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "export.File"}
	boom := errors.New("disk full")
	if _, out, err := doValue(ctx, g, pool, "f", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) || out.Status != once.Ran {
		t.Fatalf("first: %v, %v", out.Status, err)
	}
	if _, out, err := doValue(ctx, g, pool, "f", func(context.Context) (int, error) { return 1, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("after a failure: %v, %v; want ran", out.Status, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on to the caller")
			}
		}()
		doValue(ctx, g, pool, "f", func(context.Context) (int, error) { panic("kaboom") })
	}()
	rows, err := pool.Query(ctx, "SELECT state, coalesce(reason, '') FROM once.open_claims WHERE name = 'export.File' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var state, reason string
		if err := rows.Scan(&state, &reason); err != nil {
			t.Fatal(err)
		}
		got = append(got, state+":"+reason)
	}
	want := []string{"failed:disk full", "done:", "failed:the function panicked"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("claims %q, want %q", got, want)
	}
}

// Settling is conditional on the owner's token and the claim being open: a confused worker
// holding another claim's id, or settling twice, changes nothing.
func TestOpen_OnlyTheOwnerSettlesAndOnlyOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "jobs.Enqueue"}
	c, out, err := g.Claim(ctx, pool, "job/1")
	if err != nil || out.Status != once.Ran || out.Claim != strconv.FormatInt(c.ID, 10) {
		t.Fatalf("Claim: %+v, %v", out, err)
	}
	forged := &once.Claim{ID: c.ID, Name: c.Name, Key: c.Key, Token: "not-the-token"}
	if err := forged.Finish(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("forged Finish: %v, want ErrNotOwner", err)
	}
	if open, err := forged.Open(ctx, pool); err != nil || open {
		t.Fatalf("forged Open: %v, %v; want false", open, err)
	}
	if open, err := c.Open(ctx, pool); err != nil || !open {
		t.Fatalf("Open: %v, %v; want true", open, err)
	}
	if err := c.Fail(ctx, pool, "worker lost"); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("Finish after Fail: %v, want ErrNotOwner", err)
	}
	if s := claimState(t, pool, c.ID); s.state != "failed" || s.reason != "worker lost" {
		t.Fatalf("claim %+v, want failed: worker lost", s)
	}
	if open, err := c.Open(ctx, pool); err != nil || open {
		t.Fatalf("Open after Fail: %v, %v; want false", open, err)
	}
}

// An open claim older than the stale window is closed as stale by the next claim on its key,
// which then gets the key. The worker of the stale claim can no longer finish or fail it, and
// a job that checks Open before working skips the work.
func TestOpen_StaleClaimIsClosedByTheNextClaimAndItsWorkerIsFenced(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "research.StartRun", Stale: time.Minute}
	old, _, err := g.Claim(ctx, pool, "org/1")
	if err != nil {
		t.Fatal(err)
	}
	if c, out, err := g.Claim(ctx, pool, "org/1"); err != nil || c != nil || out.Status != once.InFlight || out.Holder != strconv.FormatInt(old.ID, 10) {
		t.Fatalf("claim within the window: %v, %+v, %v; want in flight at %d", c, out, err, old.ID)
	}
	backdate(t, pool, old.ID, 2*time.Minute) // its worker stalled
	fresh, out, err := g.Claim(ctx, pool, "org/1")
	if err != nil || fresh == nil || out.Status != once.Ran {
		t.Fatalf("claim after the window: %+v, %v; want a new claim", out, err)
	}
	if s := claimState(t, pool, old.ID); s.state != "stale" || !strings.Contains(s.reason, "(00:01:00)") {
		t.Fatalf("old claim %+v, want stale with the window in its reason", s)
	}
	if err := old.Finish(ctx, pool); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("stale worker's Finish: %v, want ErrNotOwner", err)
	}
	if err := old.Fail(ctx, pool, "late"); !errors.Is(err, once.ErrNotOwner) {
		t.Fatalf("stale worker's Fail: %v, want ErrNotOwner", err)
	}
	if open, err := old.Open(ctx, pool); err != nil || open {
		t.Fatalf("stale worker's Open: %v, %v; want false (skip the work)", open, err)
	}
	if s := claimState(t, pool, fresh.ID); s.state != "open" {
		t.Fatalf("the new claim is %q after the stale worker's attempts, want open", s.state)
	}
}

// A function that outlives the stale window with no heartbeat finds its claim closed when it
// settles: its result comes back with ErrNotOwner, and the claim that replaced it is
// untouched. (With the heartbeat, TestOpen_HeartbeatKeepsALongFunctionItsClaim.)
func TestOpen_DoReportsAClaimClosedWhileTheFunctionRan(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "slow", Stale: 100 * time.Millisecond, NoHeartbeat: true}
	var replacement *once.Claim
	v, out, err := doValue(ctx, g, pool, "k", func(ctx context.Context) (int, error) {
		time.Sleep(150 * time.Millisecond)
		c, _, err := g.Claim(ctx, pool, "k")
		replacement = c
		return 7, err
	})
	if !errors.Is(err, once.ErrNotOwner) || v != 7 || out.Status != once.Ran {
		t.Fatalf("got %d, %v, %v; want the result with ErrNotOwner", v, out.Status, err)
	}
	if replacement == nil {
		t.Fatal("the replacement claim was not taken")
	}
	if s := claimState(t, pool, replacement.ID); s.state != "open" {
		t.Fatalf("replacement claim is %q, want open", s.state)
	}
}

func TestSweepStale_ClosesOnlyOldOpenClaimsOfTheGuard(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "jobs"}
	other := once.Open{Name: "other"}
	var old []*once.Claim
	for _, k := range []string{"a", "b"} {
		c, _, err := g.Claim(ctx, pool, k)
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, c)
	}
	done, _, _ := g.Claim(ctx, pool, "c")
	if err := done.Finish(ctx, pool); err != nil {
		t.Fatal(err)
	}
	otherClaim, _, err := other.Claim(ctx, pool, "a")
	if err != nil {
		t.Fatal(err)
	}
	backdate(t, pool, otherClaim.ID, time.Hour)
	for _, c := range old {
		backdate(t, pool, c.ID, time.Hour)
	}
	backdate(t, pool, done.ID, time.Hour)
	young, _, _ := g.Claim(ctx, pool, "d")
	closed, err := onceops.SweepStale(ctx, pool, "jobs")
	if err != nil || closed != 2 {
		t.Fatalf("SweepStale = %d, %v; want the 2 old open claims", closed, err)
	}
	for _, c := range old {
		if s := claimState(t, pool, c.ID); s.state != "stale" {
			t.Fatalf("claim %s is %q, want stale", c.Key, s.state)
		}
	}
	if s := claimState(t, pool, young.ID); s.state != "open" {
		t.Fatalf("young claim is %q, want open", s.state)
	}
	if s := claimState(t, pool, done.ID); s.state != "done" {
		t.Fatalf("finished claim is %q, want done", s.state)
	}
	var otherOpen int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM once.open_claims WHERE name = 'other' AND state = 'open'").Scan(&otherOpen); err != nil || otherOpen != 1 {
		t.Fatalf("another guard's claims: %d open (%v), want 1", otherOpen, err)
	}
}

// Many callers arriving at a stale claim at once: one closes it and takes the key, the rest
// are redirected to the new claim.
func TestOpen_ConcurrentTakeoverOfAStaleClaimRunsOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, stormConns)
	ctx := context.Background()
	g := once.Open{Name: "research.StartRun", Stale: time.Minute}
	dead, _, err := g.Claim(ctx, pool, "org/1")
	if err != nil {
		t.Fatal(err)
	}
	backdate(t, pool, dead.ID, time.Hour) // its worker died an hour ago
	var redirected atomic.Int64
	handles := make([]string, stormSize)
	var fresh atomic.Int64
	storm(t, pool, stormSize, func(ctx context.Context, caller int, conn *pgxpool.Conn) error {
		c, out, err := g.Claim(ctx, conn, "org/1")
		if c != nil {
			fresh.Store(c.ID)
			return effect(ctx, conn, "open", "org/1", caller)
		}
		if out.Status == once.InFlight {
			redirected.Add(1)
			handles[caller] = out.Holder
		}
		return err
	})
	if n := effects(t, pool, "open", "org/1"); n != 1 {
		t.Fatalf("%d takeovers of one stale claim by %d callers, want exactly 1", n, stormSize)
	}
	if got := redirected.Load(); got != stormSize-1 {
		t.Fatalf("%d callers redirected, want %d", got, stormSize-1)
	}
	// A redirect to the dead claim would send the caller to work nobody is doing.
	want := strconv.FormatInt(fresh.Load(), 10)
	for i, h := range handles {
		if h != "" && h != want {
			t.Errorf("caller %d redirected to claim %s, want the new claim %s (the dead one is %d)", i, h, want, dead.ID)
		}
	}
	if s := claimState(t, pool, dead.ID); s.state != "stale" {
		t.Fatalf("dead claim is %q, want stale", s.state)
	}
}

// beforeQuery is a pgx tracer that calls hook before each statement is sent.
type beforeQuery func(sql string)

func (h beforeQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	h(data.SQL)
	return ctx
}

func (beforeQuery) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The interleaving the storm above hits now and then, made certain: a caller's insert meets
// a stale claim, and while it reads that claim another caller closes it. The read waits for
// the other's update and, as its snapshot predates the close, still sees the claim open. The
// claim is closed all the same, so the caller must claim again, not redirect to it.
func TestOpen_StaleClaimClosedByAnotherCallerMeanwhileIsClaimedAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 4)
	prepare(t, pool)
	// A name of its own, whose claims are not pipelined: the hook below runs before the read
	// is sent on its own, after the insert's answer (pipelined, the two leave together).
	g := once.Open{Name: "research.StartRunUnpipelined", Stale: time.Minute}
	once.SetOpenDuplicateShare(g.Name, 0)
	dead, _, err := g.Claim(ctx, pool, "org/1")
	if err != nil {
		t.Fatal(err)
	}
	backdate(t, pool, dead.ID, time.Hour)

	// The other caller: its close of the stale claim, not yet committed.
	other, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(context.Background())
	// Straight to the server: the test finds this connection's backend by its pid.
	cfg, err := pgx.ParseConfig(db.DirectURL)
	if err != nil {
		t.Fatal(err)
	}
	closing := false
	cfg.Tracer = beforeQuery(func(sql string) {
		if closing || !strings.Contains(sql, "SET state = 'stale'") {
			return
		}
		closing = true // before this caller's read is sent, the other caller closes the claim
		if _, err := other.Exec(ctx, "UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(), reason = 'closed by another caller' WHERE id = $1", dead.ID); err != nil {
			t.Error(err)
		}
	})
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	pid := conn.PgConn().PID()

	type result struct {
		c   *once.Claim
		out once.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, out, err := g.Claim(ctx, conn, "org/1")
		done <- result{c, out, err}
	}()
	// Commit the close only once the read is waiting for it.
	for waiting := false; !waiting; time.Sleep(time.Millisecond) {
		if err := pool.QueryRow(ctx, "SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.c == nil || r.out.Status != once.Ran {
		t.Fatalf("Claim = %v, %+v, %v; want a new claim (the claim it met was closed)", r.c, r.out, r.err)
	}
	if !closing {
		t.Fatal("the caller never read the claim it met: the interleaving did not happen")
	}
	if s := claimState(t, pool, dead.ID); s.state != "stale" || s.reason != "closed by another caller" {
		t.Fatalf("dead claim %+v, want closed by the other caller", s)
	}
}

// An Open claim that meets an open claim reads its handle in the same statement while its
// guard keeps meeting open claims, and sends the claim alone while its keys are new.
func TestOpen_RoundTrips(t *testing.T) {
	t.Parallel()
	pool, tracer := setupTraced(t)
	ctx := context.Background()
	g := once.Open{Name: "roundtrips.StartRun"}
	// Warm the connection's statement cache: pgx prepares each statement on first use.
	once.SetOpenDuplicateShare(g.Name, 1)
	g.Claim(ctx, pool, "warm")
	g.Claim(ctx, pool, "warm")
	once.SetOpenDuplicateShare(g.Name, 0)
	g.Claim(ctx, pool, "warm")
	step := func(what, key string, want once.Status, wantTrips int64) {
		t.Helper()
		if _, out, err := g.Claim(ctx, pool, key); err != nil || out.Status != want {
			t.Fatalf("%s: %+v %v, want %v", what, out, err, want)
		}
		if trips, stmts := tracer.take(); trips != wantTrips || stmts != wantTrips {
			t.Fatalf("%s: %d round trips, %d statements; want %d", what, trips, stmts, wantTrips)
		}
	}
	once.SetOpenDuplicateShare(g.Name, 1)
	tracer.take()
	step("fresh, claim that reads", "a", once.Ran, 1)
	step("in flight, claim that reads", "a", once.InFlight, 1)
	once.SetOpenDuplicateShare(g.Name, 0)
	step("fresh, claim alone", "b", once.Ran, 1)
	step("in flight after a claim alone (claim, then read)", "b", once.InFlight, 2)
	step("second in flight, still the claim alone", "b", once.InFlight, 2)
	step("third in flight, claim that reads", "b", once.InFlight, 1)
}

// The claim that reads must close a stale claim of someone else's and claim again, and never
// take the claimer's own new claim for another's.
func TestOpen_ClaimThatReadsClosesAStaleClaim(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Open{Name: "research.StartRunReads", Stale: time.Millisecond}
	once.SetOpenDuplicateShare(g.Name, 1)
	c, out, err := g.Claim(ctx, pool, "org/1")
	if err != nil || c == nil || out.Status != once.Ran {
		t.Fatalf("fresh claim: %v, %+v, %v", c, out, err)
	}
	if s := claimState(t, pool, c.ID); s.state != "open" {
		t.Fatalf("the new claim is %q right after it was made, want open", s.state)
	}
	time.Sleep(5 * time.Millisecond)
	once.SetOpenDuplicateShare(g.Name, 1)
	next, out, err := g.Claim(ctx, pool, "org/1")
	if err != nil || next == nil || out.Status != once.Ran {
		t.Fatalf("claim over a stale one: %v, %+v, %v; want a new claim", next, out, err)
	}
	if s := claimState(t, pool, c.ID); s.state != "stale" {
		t.Fatalf("the first claim is %q, want stale", s.state)
	}
	if s := claimState(t, pool, next.ID); s.state != "open" {
		t.Fatalf("the second claim is %q, want open", s.state)
	}
}

// A duplicate of a guard that keeps meeting open claims reads the open claim and sends no
// insert, so it answers at once while the claim's settle is still in flight in another
// transaction. The negative control is the claim alone, an insert: its conflict check finds
// the claim's row being updated and waits for that transaction to end.
func TestOpen_DuplicateReadsWithoutWaitingForASettleInFlight(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		share float64
		waits bool
	}{{"the claim that reads first", 1, false}, {"negative control: the claim alone", 0, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 4)
			ctx := context.Background()
			g := once.Open{Name: fmt.Sprintf("research.StartRunSettling%v", c.share)}
			claim, out, err := g.Claim(ctx, pool, "org/1")
			if err != nil || claim == nil || out.Status != once.Ran {
				t.Fatalf("claim: %v, %+v, %v", claim, out, err)
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if err := claim.Finish(ctx, tx); err != nil { // the settle, not yet committed
				t.Fatal(err)
			}
			once.SetOpenDuplicateShare(g.Name, c.share)
			if c.waits {
				// The claim alone waits on the settling row: seen waiting for a lock, it
				// answers once the settle's transaction rolls back.
				done := make(chan error, 1)
				go func() { _, _, err := g.Claim(ctx, pool, "org/1"); done <- err }()
				waitForLockWait(t, pool)
				tx.Rollback(ctx)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				return
			}
			// A deadline far beyond a read's time: only waiting for the settle meets it.
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, out, err = g.Claim(dctx, pool, "org/1")
			if err != nil || out.Status != once.InFlight || out.Holder != strconv.FormatInt(claim.ID, 10) {
				t.Fatalf("the duplicate during the settle: %+v, %v; want InFlight at once, on claim %d", out, err, claim.ID)
			}
		})
	}
}
