package onceui_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
	"github.com/oncekit/once/runtime/onceschema"
	"github.com/oncekit/once/runtime/onceui"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster; each test then takes
// its own fresh database from it.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// base is where the tests mount the console, as an app would under its admin routes.
const base = "/admin/once"

// scriptKey is a key an attacker chose: it must reach every page as text.
const scriptKey = `<script>alert("key")</script>`

// fixtures are the rows populate made, as the pages and actions name them.
type fixtures struct {
	uncertainID  string // billing.Charge, scope acct-1, key scriptKey
	claimID      int64  // research.Run, key org-1
	followUpID   int64  // dead
	latch, lease string // guard names, key org-1 / db-1
	allowance    string // ai.Credits, key org-1, used up
}

// populate fills pool's database by running real guards.
func populate(t testing.TB, pool *pgxpool.Pool) fixtures {
	t.Helper()
	ctx := context.Background()
	var f fixtures
	lost := func(context.Context) (int, error) {
		return 0, once.Uncertain(errors.New(`connection reset <img src=x onerror="alert('err')">`))
	}
	_, out, _ := once.ForeverValue(ctx, pool, once.Forever{Name: "billing.Charge"}, once.Ref{Scope: "acct-1", Key: scriptKey}, lost)
	if out.Claim == "" {
		t.Fatalf("no uncertain operation: %+v", out)
	}
	f.uncertainID = out.Claim
	// A charge that settled with its ledger entry and a follow-up whose deliveries all
	// failed: a dead follow-up.
	if _, _, err := once.ForeverValue(ctx, pool, once.Forever{Name: "billing.Charge"}, once.Ref{Scope: "acct-1", Key: "inv-2"},
		func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			if err := a.Record(once.LedgerEntry{Kind: "cost", Unit: "usd_micros", Quantity: 1250000}); err != nil {
				return 0, err
			}
			return 7, a.FollowUp("email", map[string]string{"to": "owner@acct-1.test"})
		}); err != nil {
		t.Fatal(err)
	}
	drain := onceops.Drain{MaxAttempts: 1, Deliver: map[string]func(context.Context, onceops.FollowUp) error{
		"email": func(context.Context, onceops.FollowUp) error { return errors.New("smtp: 554 rejected") },
	}}
	if res, err := drain.Run(ctx, pool); err != nil || res.Dead != 1 {
		t.Fatalf("drain: %+v %v, want one dead follow-up", res, err)
	}
	c, _, err := once.Open{Name: "research.Run", Stale: time.Hour}.Claim(ctx, pool, "org-1")
	if err != nil || c == nil {
		t.Fatalf("claim: %v", err)
	}
	f.claimID = c.ID
	f.latch = "alerts.Down"
	if _, err := (once.Episode{Name: f.latch}).Do(ctx, pool, "db-1", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	f.allowance = "ai.Credits"
	for range 3 {
		if _, err := (once.Statement{Name: f.allowance, Cap: 3}).Do(ctx, pool, "org-1", 1, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	f.lease = "runs.Org"
	if _, _, err := (once.Lease{Name: f.lease, TTL: time.Hour}).Acquire(ctx, pool, "org-1"); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT id FROM once.followups WHERE state = 'dead'`).Scan(&f.followUpID); err != nil {
		t.Fatal(err)
	}
	return f
}

// setup gives a test a database with the runtime's schema and populate's rows.
func setup(t testing.TB) (*pgxpool.Pool, fixtures) {
	t.Helper()
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool, populate(t, pool)
}

// console serves the console at base in a test server, for user "ana".
func console(t testing.TB, pool *pgxpool.Pool, readOnly bool) *httptest.Server {
	t.Helper()
	h, err := onceui.New(onceui.Config{DB: pool, ReadOnly: readOnly, BasePath: base, Secret: []byte("one secret for the test's consoles"),
		User: func(*http.Request) string { return "ana" }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(base+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// browser is an HTTP client that keeps cookies and sends what a browser sends with a form
// of the same origin.
type browser struct {
	t      testing.TB
	c      *http.Client
	origin string
}

func newBrowser(t testing.TB, srv *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{t: t, c: c, origin: srv.URL}
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.origin + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token reads the CSRF token from a page of the console.
func (b *browser) token() string {
	b.t.Helper()
	_, body := b.get(base + "/followups?state=dead")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		// A read-only page has no form; any page sets the cookie, and the token is the
		// same for the cookie, so take it from a page that has one when there is one.
		return ""
	}
	return m[1]
}

// post sends form to path with headers (a same-origin browser's when nil).
func (b *browser) post(path string, form url.Values, headers map[string]string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.origin+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if headers == nil {
		headers = map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.origin}
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// state reads the state of the operation id.
func state(t testing.TB, pool *pgxpool.Pool, id string) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `SELECT state::text FROM once.operations WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// audits counts the audit rows.
func audits(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM once.audit`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
