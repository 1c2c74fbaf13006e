package outreach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
	"github.com/oncekit/once/internal/fakeprovider"
)

// start is when every test's clock starts: a Monday morning early in a month.
var start = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// migratedDB is the app's database as every test starts from it: migrated, empty.
var migratedDB = migrated.Database("outreach", outreach.Migrate)

// env is one test's world: a fresh database, the fake providers, a clock, a brand with a
// campaign, and the app serving HTTP on loopback.
type env struct {
	t       *testing.T
	db      *pgxpool.Pool
	mail    *fakeprovider.Server
	source  *fakeprovider.Server
	billing *fakebilling.Server
	clock   *fixture.Clock
	brand   fixture.Brand
	// client is the test's own connection pool to the providers: a connection left idle by
	// another test's provider, closed since, is never reused here (the client does not
	// resend a request on a broken connection by itself, so that would fail a send).
	client *http.Client

	app *outreach.App
	url string
}

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{
		t:       t,
		db:      migratedDB.New(t),
		mail:    fakeprovider.New(t),
		source:  fakeprovider.New(t),
		billing: fakebilling.New(t),
		clock:   fixture.NewClock(start),
	}
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	e.client = &http.Client{Transport: transport, Timeout: 10 * time.Second}
	e.brand = fixture.SeedBrand(t, e.db, "acme", "free", start.Add(-24*time.Hour))
	e.billing.Set(fakebilling.State{Customer: e.brand.CustomerID, Plan: "free", Status: "active", UpdatedAt: start.Add(-24 * time.Hour)})
	e.app, e.url = e.instance()
	return e
}

// instance starts another instance of the app (another process, as far as the app can
// tell) on the same database and providers.
func (e *env) instance() (*outreach.App, string) {
	e.t.Helper()
	app, err := outreach.New(outreach.Config{
		DB: e.db, MailURL: e.mail.URL, SourceURL: e.source.URL, BillingURL: e.billing.URL, HTTP: e.client,
		Now: e.clock.Now, PublicURL: "https://outreach.test",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	e.t.Cleanup(srv.Close)
	return app, srv.URL
}

// do sends a request with a JSON body (nil for none) and the brand's token, and returns the
// status and the body.
func (e *env) do(method, url, path string, body any) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.brand.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Error(err) // Errorf, not Fatal: do runs in storm goroutines too
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// drain runs the worker until the queue has nothing due. It runs in storm goroutines too,
// so an error fails the test without stopping the goroutine (Error, not Fatal).
func (e *env) drain() int {
	e.t.Helper()
	n, err := e.app.Worker().Drain(context.Background())
	if err != nil {
		e.t.Error(err)
	}
	return n
}

// emails counts the emails the email provider sent, by tag.
func emails(t *testing.T, mail *fakeprovider.Server) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, eff := range mail.Log() {
		var m struct{ Tag string }
		if err := json.Unmarshal(eff.Body, &m); err != nil {
			t.Fatalf("an email that is not JSON: %s", eff.Body)
		}
		n[m.Tag]++
	}
	return n
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	return fixture.Count(e.t, e.db, query, args...)
}

func statuses(codes []int) map[int]int {
	n := map[int]int{}
	for _, c := range codes {
		n[c]++
	}
	return n
}
