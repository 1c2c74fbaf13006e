package ideas

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster; each test takes its
// own database from it. Re-executed as the process a test kills mid-start, it plays that
// part instead (see startAndHang).
func TestMain(m *testing.M) {
	if url := os.Getenv(killedStartEnv); url != "" {
		os.Exit(startAndHang(url))
	}
	os.Exit(pgtest.Main(m))
}

// org is the organisation every test presses the button for.
const org = 1

// env is one running app: its database (migrated), the fake paid API, the HTTP server on
// loopback and a worker the test drives step by step.
type env struct {
	t      *testing.T
	url    string // the database's, for a child process
	db     *pgxpool.Pool
	api    *fakeprovider.Server
	app    *App
	worker *Worker
	srv    *httptest.Server
	client *http.Client
}

// migratedDB is the app's database as every test starts from it: migrated, with the
// organisation. Each test gets a copy.
var migratedDB = migrated.Database("ideas", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	return CreateOrganisation(ctx, db, org, "Acme")
})

func setup(t *testing.T, opts ...fakeprovider.Option) *env {
	t.Helper()
	d := migratedDB.NewDatabase(t)
	db := d.Pool(t, 16)
	api := fakeprovider.New(t, opts...)
	// A connection pool of the test's own: the model's client does not resend a request on
	// a broken kept-alive connection, so it must never pick up one that another test's
	// provider (closed since, its port perhaps taken again) left idle.
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	model := &Model{BaseURL: api.URL, HTTP: &http.Client{Transport: transport}}
	e := &env{t: t, url: d.URL, db: db, api: api, app: New(db, model), worker: NewWorker(db, model)}
	e.worker.Backoff = 0
	e.srv = httptest.NewServer(e.app.Handler())
	t.Cleanup(e.srv.Close)
	// A browser follows the 303s; the tests read where they point.
	e.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e
}

// post sends a form post and returns the status and the Location it redirects to.
func (e *env) post(path string, form url.Values) (int, string) {
	e.t.Helper()
	resp, err := e.client.Post(e.srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Errorf("POST %s: %v", path, err)
		return 0, ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// storm fires n copies of the same form post at once, and returns the Location each was
// redirected to (with its status, if not 303).
func (e *env) storm(n int, path string, form url.Values) []string {
	e.t.Helper()
	return storm.Collect(n, func(int) string { return postForm(e.t, e.client, e.srv.URL+path, form) })
}

// postForm sends a form post and returns where it was redirected, with the status in front
// if it was not a 303.
func postForm(t *testing.T, client *http.Client, target string, form url.Values) string {
	resp, err := client.Post(target, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Errorf("POST %s: %v", target, err)
		return ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther {
		loc = http.StatusText(resp.StatusCode) + " " + loc
	}
	return loc
}

// drain steps the worker until no job is due, and returns the jobs it took.
func (e *env) drain() []Job {
	e.t.Helper()
	var jobs []Job
	for range 100 {
		j, took, err := e.worker.Step(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		if !took {
			return jobs
		}
		jobs = append(jobs, j)
	}
	e.t.Fatal("the worker was still taking jobs after 100 steps")
	return nil
}

// count runs a count(*) query.
func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (e *env) runs() int { return e.count(`SELECT count(*) FROM runs`) }
func (e *env) jobs() int { return e.count(`SELECT count(*) FROM jobs`) }

func (e *env) status(run int64) string {
	e.t.Helper()
	var s string
	if err := e.db.QueryRow(context.Background(), `SELECT status FROM runs WHERE id = $1`, run).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) usage() Usage {
	e.t.Helper()
	u, err := CountUsage(context.Background(), e.db, org)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// press presses the button once and returns the run it was redirected to (0 if the
// landing page).
func (e *env) press() (int64, string) {
	e.t.Helper()
	status, loc := e.post("/orgs/1/runs", nil)
	if status != http.StatusSeeOther {
		e.t.Fatalf("press: status %d, want 303", status)
	}
	var run int64
	if strings.HasPrefix(loc, "/runs/") {
		run = mustID(e.t, strings.TrimPrefix(loc, "/runs/"))
	}
	return run, loc
}

// backdate moves a run's start into the past, as if that much time had gone by.
func (e *env) backdate(run int64, by string) {
	e.t.Helper()
	if _, err := e.db.Exec(context.Background(), `UPDATE runs SET created_at = created_at - $2::interval WHERE id = $1`, run, by); err != nil {
		e.t.Fatal(err)
	}
}
