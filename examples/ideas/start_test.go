package ideas

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/storm"
	once "github.com/oncekit/once/runtime"
)

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return id
}

// Thirty-two presses at once (a double click, a second tab, a refresh, many times over) land
// on one run: one row, one job, one paid research and one paid ideation. The allowance of two
// a month is then spent by a second storm, and a third starts nothing.
func TestGenerate_ConcurrentPressesStartOneRun(t *testing.T) {
	t.Parallel()
	e := setup(t)

	var runs []int64
	for round := 1; round <= 2; round++ {
		locs := e.storm(32, "/orgs/1/runs", nil)
		var run string
		for _, loc := range locs {
			switch {
			case loc == "/orgs/1?notice=starting":
				// Turned away by the lease while the first press was starting the run.
			case len(loc) > len("/runs/") && loc[:len("/runs/")] == "/runs/":
				if run != "" && loc != run {
					t.Fatalf("round %d: presses were sent to two runs, %s and %s", round, run, loc)
				}
				run = loc
			default:
				t.Fatalf("round %d: a press ended at %q", round, loc)
			}
		}
		if run == "" {
			t.Fatalf("round %d: no press was sent to a run: %q", round, locs)
		}
		runs = append(runs, mustID(t, run[len("/runs/"):]))
		if got := e.runs(); got != round {
			t.Fatalf("round %d: %d runs in the table, want %d", round, got, round)
		}
		if got := e.jobs(); got != round {
			t.Fatalf("round %d: %d jobs queued, want %d", round, got, round)
		}
		jobs := e.drain()
		if len(jobs) != 1 || jobs[0].Result != ResultCompleted {
			t.Fatalf("round %d: the worker took %+v, want one completed job", round, jobs)
		}
	}
	if runs[0] == runs[1] {
		t.Fatalf("both rounds ended on run %d", runs[0])
	}

	// The allowance is spent: a third storm is sent to the landing page, and pays for nothing.
	for _, loc := range e.storm(32, "/orgs/1/runs", nil) {
		if loc != "/orgs/1?notice=allowance-used" && loc != "/orgs/1?notice=starting" {
			t.Fatalf("a press after the allowance was spent ended at %q", loc)
		}
	}
	e.drain()

	if got := e.runs(); got != 2 {
		t.Errorf("%d runs, want 2", got)
	}
	if got := e.api.EffectsAt("/v1/research"); got != 2 {
		t.Errorf("the research API was paid %d times, want 2", got)
	}
	if got := e.api.EffectsAt("/v1/ideas"); got != 2 {
		t.Errorf("the model was paid %d times for ideas, want 2", got)
	}
	if got := e.count(`SELECT count(*) FROM ideas`); got != 2*IdeasPerRun {
		t.Errorf("%d ideas saved, want %d", got, 2*IdeasPerRun)
	}
	if got := e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`); got != 2 {
		t.Errorf("%d completed runs, want 2", got)
	}
	if u := e.usage(); u.Used != 2 {
		t.Errorf("allowance used %d, want 2", u.Used)
	}
	if got := e.count(`SELECT count(*) FROM once.counter_slots WHERE name = 'ideas.research-daily'`); got != 2 {
		t.Errorf("the daily research counter is at %d, want 2", got)
	}
}

// The story's own test of the one setting the lock depends on (a store shared between
// requests): hold the lock from outside, press, and nothing is created or queued.
func TestGenerate_LockHeldFromOutsideStartsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()

	lease := once.Lease{Name: "ideas.generate", TTL: 10 * time.Second}
	held, out, err := lease.Acquire(ctx, e.db, once.MustKey(int64(org)))
	if err != nil || !out.Ran() {
		t.Fatalf("acquire the lock from outside: %v, %v", out.Status, err)
	}
	if status, loc := e.post("/orgs/1/runs", nil); status != http.StatusSeeOther || loc != "/orgs/1?notice=starting" {
		t.Fatalf("press while the lock is held: %d %q, want 303 to the landing page", status, loc)
	}
	if got := e.runs(); got != 0 {
		t.Errorf("%d runs created while the lock was held, want 0", got)
	}
	if got := e.jobs(); got != 0 {
		t.Errorf("%d jobs queued while the lock was held, want 0", got)
	}

	if err := held.Release(ctx, e.db); err != nil {
		t.Fatal(err)
	}
	if run, _ := e.press(); run == 0 || e.runs() != 1 || e.jobs() != 1 {
		t.Fatalf("press after release: run %d, %d runs, %d jobs; want one run and its job", run, e.runs(), e.jobs())
	}
}

// killedStartEnv, set to a database URL, makes the re-executed test binary the process
// killed in the middle of a start.
const killedStartEnv = "IDEAS_KILLED_START_DATABASE_URL"

// startAndHang presses the button through the app's own path, and between the in-flight
// check and the insert (holding the lease, inside the start's transaction) says so and
// waits to be killed. It gives up after a minute, should its parent be gone.
func startAndHang(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	app := New(db, &Model{})
	app.beforeInsert = func() {
		fmt.Println("holding")
		<-ctx.Done()
	}
	_, _, err = app.StartGenerationOnce(ctx, db, org)
	fmt.Fprintln(os.Stderr, "the start was not killed:", err)
	return 2
}

// A process killed between taking the lock and releasing it (SIGKILL: no deferred release,
// no rollback sent) blocks the organisation only until the lease expires, ten seconds at
// most; what it had started is rolled back by the database, so it leaves no run behind.
func TestGenerate_LockOfAKilledProcessExpires(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), killedStartEnv+"="+e.url)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("the child said %q (%v), want holding", line, err)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	if _, loc := e.press(); loc != "/orgs/1?notice=starting" || e.runs() != 0 || e.jobs() != 0 {
		t.Fatalf("press after the holder was killed: %q with %d runs, %d jobs; want the landing page and nothing", loc, e.runs(), e.jobs())
	}
	// How long the dead holder's lease has left, by the database's clock: 10 s at most.
	var left time.Duration
	if err := e.db.QueryRow(ctx, `SELECT expires_at - now() FROM once.leases WHERE name = 'ideas.generate'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left > 10*time.Second {
		t.Fatalf("the lease has %s left, want at most 10s", left)
	}
	// Let those seconds pass: the lease's whole timeline (taken, expiring) moves back by
	// what was left of it, as the runtime judges expiry by the database's clock alone.
	if _, err := e.db.Exec(ctx, `UPDATE once.leases SET acquired_at = acquired_at - $1::interval, expires_at = expires_at - $1::interval
		WHERE name = 'ideas.generate'`, left+time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var lapsed bool
	if err := e.db.QueryRow(ctx, `SELECT now() > expires_at FROM once.leases WHERE name = 'ideas.generate'`).Scan(&lapsed); err != nil || !lapsed {
		t.Fatalf("the dead holder's lease has not lapsed (%v)", err)
	}
	if run, _ := e.press(); run == 0 || e.runs() != 1 || e.jobs() != 1 {
		t.Fatalf("press after the lease lapsed: run %d with %d runs, %d jobs; want one new run", run, e.runs(), e.jobs())
	}
	var fence int64
	if err := e.db.QueryRow(ctx, `SELECT fence FROM once.leases WHERE name = 'ideas.generate'`).Scan(&fence); err != nil || fence != 2 {
		t.Errorf("lease fence %d (%v), want 2: taken over from the dead holder", fence, err)
	}
}

// The lease is the fast answer, not the only one: starts that get past it together (as when
// a start outlives its ten seconds) and all pass the in-flight check before any inserts still
// make one run, because the insert under the partial unique index is the check that cannot
// be raced. The rest are shown the run that won.
func TestGenerate_OneRunEvenWhenTheLeaseIsBypassed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 8
	e.app.beforeInsert = storm.Hold(t, n)
	starts := make([]Start, n)
	errs := make([]error, n)
	storm.Run(n, func(i int) {
		// StartGeneration itself, not its lease wrapper: every start is past the lease.
		starts[i], errs[i] = e.app.StartGeneration(context.Background(), org)
	})
	started := 0
	for i, st := range starts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if st.Run != starts[0].Run {
			t.Fatalf("starts were shown runs %d and %d", starts[0].Run, st.Run)
		}
		if st.Started {
			started++
		}
	}
	if started != 1 || e.runs() != 1 || e.jobs() != 1 {
		t.Fatalf("%d starts created a run; %d runs, %d jobs; want 1 of each", started, e.runs(), e.jobs())
	}
}

// The slow second press (a second tab a minute later) is redirected to the progress page of
// the run already in flight; once that run has completed, a press starts the next one.
func TestGenerate_SecondTabLandsOnTheRunInFlight(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first, _ := e.press()
	second, _ := e.press()
	if first == 0 || second != first {
		t.Fatalf("second press went to run %d, want the first press's run %d", second, first)
	}
	if e.runs() != 1 {
		t.Fatalf("%d runs, want 1", e.runs())
	}
	e.drain()
	third, _ := e.press()
	if third == 0 || third == first {
		t.Fatalf("press after the run completed went to %d, want a new run", third)
	}
}

// Bad input is answered with a clear status and writes nothing: not a run, not a lease row.
func TestGenerate_BadInputWritesNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for path, want := range map[string]int{
		"/orgs/abc/runs": http.StatusBadRequest,
		"/orgs/-4/runs":  http.StatusBadRequest,
		"/orgs/999/runs": http.StatusNotFound,
	} {
		if status, _ := e.post(path, nil); status != want {
			t.Errorf("POST %s: %d, want %d", path, status, want)
		}
	}
	if status, _ := e.post("/ideas/1/refine", map[string][]string{"revision": {"x"}, "note": {"shorter"}}); status != http.StatusBadRequest {
		t.Errorf("refine with a bad revision: %d, want 400", status)
	}
	if status, _ := e.post("/ideas/77/dismiss", nil); status != http.StatusNotFound {
		t.Errorf("dismiss an unknown idea: %d, want 404", status)
	}
	if got := e.runs() + e.jobs() + e.count(`SELECT count(*) FROM once.leases`) + e.count(`SELECT count(*) FROM once.operations`); got != 0 {
		t.Errorf("bad input wrote %d rows, want none", got)
	}
}
