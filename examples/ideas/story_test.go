package ideas

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/ideas/naive"
	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/internal/tally"
	"github.com/oncekit/once/internal/fakeprovider"
	once "github.com/oncekit/once/runtime"
)

// naiveEnv is the naive twin, running: its own database, fake API, server and worker.
type naiveEnv struct {
	t      *testing.T
	api    *fakeprovider.Server
	app    *naive.App
	worker *naive.Worker
	db     *pgxpool.Pool
	url    string
}

// naiveDB is the naive twin's database as every story starts from it.
var naiveDB = migrated.Database("ideas_naive", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := naive.Migrate(ctx, db); err != nil {
		return err
	}
	return naive.CreateOrganisation(ctx, db, org, "Acme")
})

func setupNaive(t *testing.T) *naiveEnv {
	t.Helper()
	db := naiveDB.New(t)
	api := fakeprovider.New(t)
	n := &naiveEnv{t: t, db: db, api: api, app: naive.New(db), worker: naive.NewWorker(db, api.URL)}
	srv := httptest.NewServer(n.app.Handler())
	t.Cleanup(srv.Close)
	n.url = srv.URL
	return n
}

func (n *naiveEnv) count(sql string) int {
	n.t.Helper()
	var c int
	if err := n.db.QueryRow(context.Background(), sql).Scan(&c); err != nil {
		n.t.Fatal(err)
	}
	return c
}

// press presses the naive twin's button once and returns where it was sent.
func (n *naiveEnv) press() string { return postForm(n.t, noRedirects, n.url+"/orgs/1/runs", nil) }

func (n *naiveEnv) drain() {
	for range 200 {
		took, err := n.worker.Step(context.Background())
		if err != nil {
			n.t.Fatal(err)
		}
		if !took {
			return
		}
	}
	n.t.Fatal("the naive worker did not run dry")
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestStory runs the story end to end against the app and its naive twin, one scene after
// another, each on fresh databases, and prints what each paid for (go test -run
// '^TestStory$' -v). Every number in the table is asserted as it is entered.
func TestStory(t *testing.T) {
	t.Parallel()
	tab := tally.New(t, "ideas: never paying twice (lasting effects, counted)", "ideas", "naive")
	defer tab.Print()

	// 1. Thirty-two presses at once. The naive twin's presses are all held between their
	// in-flight check and their insert until every one has checked.
	const presses = 32
	a, n := setup(t), setupNaive(t)
	a.storm(presses, "/orgs/1/runs", nil)
	a.drain()
	n.app.BeforeInsert = storm.Hold(t, presses)
	storm.Run(presses, func(int) { n.press() })
	n.drain()
	tab.Scene("32 presses of the button at once")
	tab.Row("runs created", tally.Is(a.runs(), 1), tally.Is(n.count(`SELECT count(*) FROM runs`), presses))
	tab.Row("jobs queued", tally.Is(a.jobs(), 1), tally.Is(n.count(`SELECT count(*) FROM jobs`), presses))
	tab.Row("research paid for", tally.Is(a.api.EffectsAt("/v1/research"), 1), tally.Is(n.api.EffectsAt("/v1/research"), presses))
	tab.Row("ideas paid for", tally.Is(a.api.EffectsAt("/v1/ideas"), 1), tally.Is(n.api.EffectsAt("/v1/ideas"), presses))

	// 2. The research API did the work and the answer was lost; the job is retried.
	a, n = setup(t), setupNaive(t)
	a.press()
	a.api.DropAfterAccept(1)
	a.drain()
	n.press()
	n.api.DropAfterAccept(1)
	n.drain()
	tab.Scene("the research answer lost, the job retried")
	tab.Row("research paid for", tally.Is(a.api.EffectsAt("/v1/research"), 1), tally.Is(n.api.EffectsAt("/v1/research"), 2))
	tab.Row("answers replayed by the provider", tally.Is(a.api.Replays(), 1), tally.Is(n.api.Replays(), 0))

	// 3. The lock held from outside (another instance is starting a run right now). The
	// naive twin has no lock to hold.
	a = setup(t)
	heldLease, out, err := once.Lease{Name: "ideas.generate", TTL: 10 * time.Second}.Acquire(context.Background(), a.db, once.MustKey(int64(org)))
	if err != nil || !out.Ran() {
		t.Fatalf("acquire the lock from outside: %v, %v", out.Status, err)
	}
	_, loc := a.press()
	tab.Scene("a press while another instance holds the lock")
	tab.Row("runs created", tally.Is(a.runs(), 0), tally.None())
	tab.Row("jobs queued", tally.Is(a.jobs(), 0), tally.None())
	tab.Row("sent to the landing page", tally.Is(loc == "/orgs/1?notice=starting", true), tally.None())
	if err := heldLease.Release(context.Background(), a.db); err != nil {
		t.Fatal(err)
	}

	// 4. The provider is down; the queue gives up on the job.
	a, n = setup(t), setupNaive(t)
	a.worker.MaxAttempts = 3
	first, _ := a.press()
	a.api.FailNext(3, http.StatusServiceUnavailable)
	a.drain()
	appUsed := a.usage().Used
	next, _ := a.press()
	naiveFirst := n.press()
	if !strings.HasPrefix(naiveFirst, "/runs/") {
		t.Fatalf("the naive twin's first press went to %q, want a run", naiveFirst)
	}
	n.api.FailNext(3, http.StatusServiceUnavailable)
	n.drain()
	naiveUsed, err := naive.CountUsage(context.Background(), n.db, org)
	if err != nil {
		t.Fatal(err)
	}
	naiveNext := n.press()
	var naiveStatus string
	if err := n.db.QueryRow(context.Background(), `SELECT status FROM runs`).Scan(&naiveStatus); err != nil {
		t.Fatal(err)
	}
	tab.Scene("the provider down until the queue gives up")
	tab.Row("the abandoned run says", tally.Is(a.status(first), StatusFailed), tally.Is(naiveStatus, "researching"))
	tab.Row("allowance it spends", tally.Is(appUsed, 0), tally.Is(naiveUsed, 1))
	tab.Row("the next press starts a new run", tally.Is(next != first, true), tally.Is(naiveNext != naiveFirst, false))
}
