package ideas

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/ideas/naive"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
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
	count  func(sql string) int
}

func setupNaive(t *testing.T) *naiveEnv {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	if err := naive.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := naive.CreateOrganisation(ctx, db, org, "Acme"); err != nil {
		t.Fatal(err)
	}
	api := fakeprovider.New(t)
	n := &naiveEnv{t: t, db: db, api: api, app: naive.New(db), worker: naive.NewWorker(db, api.URL)}
	srv := httptest.NewServer(n.app.Handler())
	t.Cleanup(srv.Close)
	n.url = srv.URL
	n.count = func(sql string) int {
		var c int
		if err := db.QueryRow(ctx, sql).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	return n
}

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

// TestStory runs the story end to end against the app and its naive twin, side by side,
// and prints what each paid for (go test -run TestStory -v). Every number is also asserted.
func TestStory(t *testing.T) {
	t.Parallel()
	var table strings.Builder
	row := func(what string, app, naive any) { fmt.Fprintf(&table, "  %-44s %12v %12v\n", what, app, naive) }
	fmt.Fprintf(&table, "  %-44s %12s %12s\n", "", "app", "naive")
	check := func(what string, got, want int) {
		if got != want {
			t.Errorf("%s: %d, want %d", what, got, want)
		}
	}

	// 1. Thirty-two presses at once. The naive twin's presses are all held between their
	// in-flight check and their insert until every one has checked.
	const presses = 32
	a, n := setup(t), setupNaive(t)
	storm(t, a.client, a.srv.URL+"/orgs/1/runs", presses, nil)
	a.drain()
	var held atomic.Int32
	all := make(chan struct{})
	n.app.BeforeInsert = func() {
		if held.Add(1) == presses {
			close(all)
		}
		<-all
	}
	storm(t, noRedirects, n.url+"/orgs/1/runs", presses, nil)
	n.drain()
	fmt.Fprintf(&table, "%d presses of the button at once\n", presses)
	row("runs created", a.runs(), n.count(`SELECT count(*) FROM runs`))
	row("jobs queued", a.jobs(), n.count(`SELECT count(*) FROM jobs`))
	row("research paid for", a.api.EffectsAt("/v1/research"), n.api.EffectsAt("/v1/research"))
	row("ideas paid for", a.api.EffectsAt("/v1/ideas"), n.api.EffectsAt("/v1/ideas"))
	check("app runs", a.runs(), 1)
	check("app research", a.api.EffectsAt("/v1/research"), 1)
	check("naive runs", n.count(`SELECT count(*) FROM runs`), presses)
	check("naive research", n.api.EffectsAt("/v1/research"), presses)

	// 2. The research API did the work and the answer was lost; the job is retried.
	a, n = setup(t), setupNaive(t)
	a.press()
	a.api.DropAfterAccept(1)
	a.drain()
	storm(t, noRedirects, n.url+"/orgs/1/runs", 1, nil)
	n.api.DropAfterAccept(1)
	n.drain()
	fmt.Fprintf(&table, "the research answer lost, the job retried\n")
	row("research paid for", a.api.EffectsAt("/v1/research"), n.api.EffectsAt("/v1/research"))
	row("answers replayed by the provider", a.api.Replays(), n.api.Replays())
	check("app research after a lost answer", a.api.EffectsAt("/v1/research"), 1)
	check("naive research after a lost answer", n.api.EffectsAt("/v1/research"), 2)

	// 3. The lock held from outside (another instance is starting a run right now).
	a = setup(t)
	heldLease, err := once.Lease[struct{}]{Name: "ideas.generate", TTL: 10 * time.Second}.Acquire(context.Background(), a.db, once.Key(int64(org)))
	if err != nil {
		t.Fatal(err)
	}
	_, loc := a.press()
	fmt.Fprintf(&table, "a press while another instance holds the lock\n")
	row("runs created, jobs queued", fmt.Sprintf("%d, %d", a.runs(), a.jobs()), "no lock")
	check("app runs under a held lock", a.runs()+a.jobs(), 0)
	if loc != "/orgs/1?notice=starting" {
		t.Errorf("press under a held lock went to %q, want the landing page", loc)
	}
	heldLease.Release(context.Background(), a.db)

	// 4. The provider is down; the queue gives up on the job.
	a, n = setup(t), setupNaive(t)
	a.worker.MaxAttempts = 3
	first, _ := a.press()
	a.api.FailNext(3, http.StatusServiceUnavailable)
	a.drain()
	appUsed := a.usage().Used
	next, _ := a.press()
	storm(t, noRedirects, n.url+"/orgs/1/runs", 1, nil)
	n.api.FailNext(3, http.StatusServiceUnavailable)
	n.drain()
	naiveUsed, err := naive.CountUsage(context.Background(), n.db, org)
	if err != nil {
		t.Fatal(err)
	}
	naiveNext := storm(t, noRedirects, n.url+"/orgs/1/runs", 1, nil)[0]
	fmt.Fprintf(&table, "the provider down until the queue gives up\n")
	var naiveStatus string
	if err := n.db.QueryRow(context.Background(), `SELECT status FROM runs WHERE id = 1`).Scan(&naiveStatus); err != nil {
		t.Fatal(err)
	}
	row("the abandoned run says", a.status(first), naiveStatus)
	row("allowance it spends", appUsed, naiveUsed)
	row("the next press starts a new run", next != first, naiveNext != "/runs/1")
	check("app: the abandoned run's allowance", appUsed, 0)
	check("naive: the abandoned run's allowance", naiveUsed, 1)
	if a.status(first) != StatusFailed || next == first || naiveStatus != "researching" || naiveNext != "/runs/1" {
		t.Errorf("abandoned run: app %s, next press to %d; naive next press to %s", a.status(first), next, naiveNext)
	}

	if testing.Verbose() {
		fmt.Printf("\nNever paying twice, counted (lasting effects, not HTTP answers):\n%s\n", table.String())
	}
}
