package naive

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type env struct {
	t      *testing.T
	db     *pgxpool.Pool
	api    *fakeprovider.Server
	app    *App
	worker *Worker
	srv    *httptest.Server
	client *http.Client
}

// migratedDB is the naive twin's database as every test starts from it: its tables, and
// the organisation.
var migratedDB = migrated.Database("naive", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	return CreateOrganisation(ctx, db, 1, "Acme")
})

func setup(t *testing.T) *env {
	t.Helper()
	db := migratedDB.New(t)
	api := fakeprovider.New(t)
	e := &env{t: t, db: db, api: api, app: New(db), worker: NewWorker(db, api.URL)}
	e.srv = httptest.NewServer(e.app.Handler())
	t.Cleanup(e.srv.Close)
	e.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e
}

// press presses the button once and returns where it was redirected. It runs in storm
// goroutines too, so a failed request is an error, not a Fatal.
func (e *env) press() string {
	e.t.Helper()
	resp, err := e.client.Post(e.srv.URL+"/orgs/1/runs", "", nil)
	if err != nil {
		e.t.Error(err)
		return ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get("Location")
}

func (e *env) drain() {
	e.t.Helper()
	for range 200 {
		took, err := e.worker.Step(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		if !took {
			return
		}
	}
	e.t.Fatal("the worker was still taking jobs after 200 steps")
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// holdAtInsert makes the next n presses wait between their in-flight check and their
// insert until all n have checked: the double click whose requests arrive together.
func (e *env) holdAtInsert(n int) { e.app.BeforeInsert = storm.Hold(e.t, n) }

// storm fires n presses of the button at once and returns where each was redirected.
func (e *env) storm(n int) []string { return storm.Collect(n, func(int) string { return e.press() }) }

// The same storm the real app turns into one run: here every press passes the in-flight
// check before any inserts, so each one inserts a run and queues a job, and the worker pays
// for the research and the ideas of every one of them.
func TestNaive_ConcurrentPressesStartManyRuns(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 32
	e.holdAtInsert(n)
	distinct := map[string]bool{}
	for _, loc := range e.storm(n) {
		distinct[loc] = true
	}
	e.drain()

	runs, jobs := e.count(`SELECT count(*) FROM runs`), e.count(`SELECT count(*) FROM jobs`)
	research := e.api.EffectsAt("/v1/research")
	t.Logf("%d presses: %d progress pages, %d runs, %d jobs, research paid %d times, ideas paid %d times",
		n, len(distinct), runs, jobs, research, e.api.EffectsAt("/v1/ideas"))
	if runs <= 1 || jobs <= 1 || research <= 1 {
		t.Fatalf("%d runs, %d jobs, %d research calls: the naive app was meant to duplicate them", runs, jobs, research)
	}
	if runs != n || research != n {
		t.Errorf("%d runs and %d research calls, want %d of each (every press held past the check inserts)", runs, research, n)
	}
}

// The research call has no idempotency key: the provider did the research, the answer was
// lost, the job was retried, and the provider did (and billed) it again.
func TestNaive_LostResearchAnswerIsPaidTwice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.press()
	e.api.DropAfterAccept(1)
	e.drain()
	if got := e.api.EffectsAt("/v1/research"); got != 2 {
		t.Fatalf("research performed %d times, want 2: the lost one and its repeat", got)
	}
	if got := e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`); got != 1 {
		t.Errorf("%d runs completed, want 1", got)
	}
}

// The ideas call has a key, made from the clock: the retry after a lost answer sends a new
// key, and the provider does the work again.
func TestNaive_ClockKeyedIdeasAreRepeated(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.press()
	var once sync.Once
	e.worker.BeforeIdeate = func() { once.Do(func() { e.api.DropAfterAccept(1) }) }
	e.drain()
	if got := e.api.EffectsAt("/v1/ideas"); got != 2 {
		t.Fatalf("ideas performed %d times, want 2: the lost one and its repeat", got)
	}
	if got := e.api.Replays(); got != 0 {
		t.Errorf("%d replays: a clock key never matches an earlier one, want 0", got)
	}
	keys := map[string]bool{}
	for _, eff := range e.api.Log() {
		if eff.Path == "/v1/ideas" {
			keys[eff.Key] = true
		}
	}
	if len(keys) != 2 {
		t.Errorf("the ideas calls sent %d distinct keys, want 2 (one per attempt)", len(keys))
	}
}

// With no failure hook and no stale rule, a run whose job gave up says "researching" for
// ever: the button sends every later press to it, even long after, and the allowance charges
// the customer for it.
func TestNaive_AbandonedRunBlocksAndCountsForEver(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := e.press()
	if !strings.HasPrefix(first, "/runs/") {
		t.Fatalf("first press went to %q, want a run", first)
	}
	e.api.FailNext(3, http.StatusServiceUnavailable)
	e.drain()
	if got := e.count(`SELECT count(*) FROM jobs WHERE state = 'failed'`); got != 1 {
		t.Fatalf("%d failed jobs, want 1", got)
	}
	if _, err := e.db.Exec(context.Background(), `UPDATE runs SET created_at = now() - interval '3 hours'`); err != nil {
		t.Fatal(err)
	}
	if got := e.press(); got != first {
		t.Fatalf("press hours later went to %q, the naive app was meant to send it to the dead run %q", got, first)
	}
	if got := e.count(`SELECT count(*) FROM runs WHERE status = 'researching'`); got != 1 {
		t.Errorf("%d runs say researching, want the dead one", got)
	}
	if used, err := CountUsage(context.Background(), e.db, 1); err != nil || used != 1 {
		t.Errorf("allowance used %d (%v), the naive app was meant to count the undelivered run", used, err)
	}
}
