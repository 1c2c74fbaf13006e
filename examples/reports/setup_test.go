package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/reports"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// world is one deployment of the app for a test: a database, two stand-in providers, and
// one or more replicas of the app serving HTTP on loopback.
type world struct {
	t        *testing.T
	pool     *pgxpool.Pool
	model    *fakeprovider.Server
	mail     *fakeprovider.Server
	replicas []*reports.App
	urls     []string
}

// options changes how setup builds a world.
type options struct {
	replicas      int
	conns         int
	modelOpts     []fakeprovider.Option
	modelNoDedupe bool
}

// migratedDB is the app's database as every test starts from it: migrated, with two
// accounts, "acme" (token "acme-token") and "globex" (token "globex-token").
var migratedDB = migrated.Database("reports", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := reports.Migrate(ctx, db); err != nil {
		return err
	}
	app, err := reports.New(reports.Config{DB: db, Model: &reports.Provider{}, Mail: &reports.Provider{}})
	if err != nil {
		return err
	}
	for _, a := range [][3]string{{"acme", "owner@acme.test", "acme-token"}, {"globex", "owner@globex.test", "globex-token"}} {
		if err := app.AddAccount(ctx, a[0], a[1], a[2]); err != nil {
			return err
		}
	}
	return nil
})

// setup copies the migrated database and starts the providers and the app's replicas.
func setup(t *testing.T, o options) *world {
	t.Helper()
	if o.replicas == 0 {
		o.replicas = 1
	}
	if o.conns == 0 {
		o.conns = 16
	}
	w := &world{t: t, pool: migratedDB.NewDatabase(t).Pool(t, o.conns)}
	w.model = fakeprovider.New(t, o.modelOpts...)
	w.mail = fakeprovider.New(t)
	// A connection pool of the world's own: the providers' client does not resend a request
	// on a broken kept-alive connection, so it must never pick up one that another test's
	// provider (closed since, its port perhaps taken again) left idle.
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}
	for range o.replicas {
		app, err := reports.New(reports.Config{
			DB:           w.pool,
			Model:        &reports.Provider{BaseURL: w.model.URL, HTTP: client, Dedupes: !o.modelNoDedupe},
			Mail:         &reports.Provider{BaseURL: w.mail.URL, HTTP: client, Dedupes: true},
			EmailBackoff: time.Microsecond, // a failed email is due again at once, for the next pass
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(app.Handler())
		t.Cleanup(srv.Close)
		w.replicas = append(w.replicas, app)
		w.urls = append(w.urls, srv.URL)
	}
	return w
}

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer %d %s: %v", r.status, r.body, err)
	}
}

// job decodes a 202 answer's job.
func (r reply) job(t *testing.T) jobView {
	t.Helper()
	if r.status != http.StatusAccepted {
		t.Fatalf("answer %d %s, want 202 with a job", r.status, r.body)
	}
	var j jobView
	r.json(t, &j)
	return j
}

type jobView struct {
	ID         int64  `json:"id"`
	State      string `json:"state"`
	Submission int64  `json:"submission"`
	Reference  string `json:"reference"`
	Replaces   int64  `json:"replaces"`
	Report     int64  `json:"report"`
	Error      string `json:"error"`
}

// do sends one request to replica i as the account with token; key "" sends no
// Idempotency-Key.
func (w *world) do(i int, method, path, token, key string, body any) reply {
	w.t.Helper()
	r, err := w.try(i, method, path, token, key, body)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// try is do for goroutines other than the test's: it returns its error.
func (w *world) try(i int, method, path, token, key string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.urls[i]+path, rd)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// submit creates a submission for the account with token and returns its id.
func (w *world) submit(token, key, title string) int64 {
	w.t.Helper()
	r := w.do(0, "POST", "/submissions", token, key, map[string]string{"title": title, "body": "Quarterly numbers, three regions, one outlier in the north."})
	if r.status != http.StatusCreated {
		w.t.Fatalf("submitting: %d %s", r.status, r.body)
	}
	var s struct{ ID int64 }
	r.json(w.t, &s)
	return s.ID
}

// work runs one pass of the worker on replica 0.
func (w *world) work() reports.WorkResult {
	w.t.Helper()
	res, err := w.replicas[0].Work(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// effects are the lasting effects the story counts.
type effects struct {
	Jobs, Reports, Usage, ModelCalls, Emails int
}

func (w *world) count() effects {
	w.t.Helper()
	var e effects
	err := w.pool.QueryRow(context.Background(), `SELECT
	(SELECT count(*) FROM report_jobs), (SELECT count(*) FROM reports),
	(SELECT count(*) FROM once.ledger WHERE kind = 'usage')`).Scan(&e.Jobs, &e.Reports, &e.Usage)
	if err != nil {
		w.t.Fatal(err)
	}
	e.ModelCalls = w.model.EffectsAt("/v1/responses")
	e.Emails = w.mail.EffectsAt("/v1/emails")
	return e
}

func (w *world) want(what string, want effects) {
	w.t.Helper()
	got := w.count()
	if got != want {
		w.t.Fatalf("%s: counted %+v, want %+v", what, got, want)
	}
	w.t.Logf("%s: counted %+v", what, got)
}
