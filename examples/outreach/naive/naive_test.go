package naive_test

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
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
	"github.com/oncekit/once/examples/outreach/naive"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

// These tests fire the storms of package outreach's tests at the naive app, and count the
// duplicates it makes. Where a duplicate needs two requests to interleave, a hook holds
// every request between its check and its write until all of them have checked, so the
// race happens on every run: the counts are exact, not "more than one, usually".

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const duplicates = 40

var start = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// migratedDB is the naive app's database as every test starts from it.
var migratedDB = migrated.Database("naive", naive.Migrate)

type env struct {
	t       *testing.T
	db      *pgxpool.Pool
	mail    *fakeprovider.Server
	source  *fakeprovider.Server
	billing *fakebilling.Server
	clock   *fixture.Clock
	brand   fixture.Brand
	app     *naive.App
	url     string
}

// setup builds the naive app's world; hold, if not nil, names the check ("thread", "job",
// "budget") at which n requests wait for each other.
func setup(t *testing.T, hold string, n int) *env {
	t.Helper()
	e := &env{t: t, db: migratedDB.New(t), mail: fakeprovider.New(t), source: fakeprovider.New(t), billing: fakebilling.New(t), clock: fixture.NewClock(start)}
	e.brand = fixture.SeedBrand(t, e.db, "acme", "free", start.Add(-24*time.Hour))
	var hooks naive.Hooks
	if hold != "" {
		wait := storm.Hold(t, n)
		hooks.Checked = func(what string) {
			if what == hold {
				wait()
			}
		}
	}
	e.app, e.url = e.instance(hooks)
	return e
}

func (e *env) instance(hooks naive.Hooks) (*naive.App, string) {
	app, err := naive.New(naive.Config{DB: e.db, MailURL: e.mail.URL, SourceURL: e.source.URL, BillingURL: e.billing.URL, Now: e.clock.Now, Hooks: hooks})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	e.t.Cleanup(srv.Close)
	return app, srv.URL
}

func (e *env) do(method, url, path string, body any) int {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, url+path, bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.brand.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func (e *env) drain(w *naive.Worker) {
	if _, err := w.Drain(context.Background()); err != nil {
		e.t.Error(err)
	}
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	return fixture.Count(e.t, e.db, query, args...)
}

func emails(t *testing.T, mail *fakeprovider.Server, tag string) int {
	n := 0
	for _, eff := range mail.Log() {
		var m struct{ Tag string }
		json.Unmarshal(eff.Body, &m)
		if m.Tag == tag {
			n++
		}
	}
	return n
}

// Forty requests open the same conversation: each checks, finds none, and inserts. Forty
// conversations, forty emails to one creator.
func TestNaive_DuplicateStormOpensAConversationPerRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, "thread", duplicates)
	creator := fixture.SeedCreators(t, e.db, 1)[0]
	storm.Run(duplicates, func(int) {
		e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator})
	})
	if n := e.count(`SELECT count(*) FROM outreach_threads`); n != duplicates {
		t.Errorf("%d conversations with one creator, want %d: one per request", n, duplicates)
	}
	e.drain(e.app.Worker())
	if n := emails(t, e.mail, "outreach"); n != duplicates {
		t.Errorf("%d outreach emails to one creator, want %d", n, duplicates)
	}
}

// Forty different conversations at once on a plan of five a month: every request counted
// zero before any inserted, so all forty open.
func TestNaive_AllowanceStormOpensPastTheAllowance(t *testing.T) {
	t.Parallel()
	e := setup(t, "thread", duplicates)
	creators := fixture.SeedCreators(t, e.db, duplicates)
	storm.Run(duplicates, func(i int) {
		e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creators[i]})
	})
	if n := e.count(`SELECT count(*) FROM outreach_threads`); n != duplicates {
		t.Errorf("%d conversations on an allowance of %d, want %d", n, naive.Allowance("free"), duplicates)
	}
}

// Refused requests each send the "limit reached" email: the memo around it lasts one
// request.
func TestNaive_LimitEmailOnEveryRefusedRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	creators := fixture.SeedCreators(t, e.db, duplicates)
	for i := range 5 {
		if code := e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creators[i]}); code != http.StatusCreated {
			t.Fatalf("start %d: %d", i, code)
		}
	}
	codes := make([]int, duplicates-5)
	storm.Run(duplicates-5, func(i int) {
		codes[i] = e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creators[5+i]})
	})
	for _, c := range codes {
		if c != http.StatusPaymentRequired {
			t.Fatalf("a start past the allowance answered %d", c)
		}
	}
	if n := emails(t, e.mail, "limit"); n != duplicates-5 {
		t.Errorf("%d limit emails, want %d: one per refused request", n, duplicates-5)
	}
}

// Forty requests queue the same import: each looks for an open job, finds none, inserts.
func TestNaive_ImportStormQueuesAJobPerRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, "job", duplicates)
	storm.Run(duplicates, func(int) { e.do("POST", e.url, "/imports", map[string]string{"city": "Lisbon"}) })
	if n := e.count(`SELECT count(*) FROM jobs WHERE dedupe_key = 'import:lisbon'`); n != duplicates {
		t.Errorf("%d open import jobs for one city, want %d", n, duplicates)
	}
	e.drain(e.app.Worker())
	if n := e.source.Effects(); n != duplicates {
		t.Errorf("%d paid searches for one city, want %d", n, duplicates)
	}
}

// Sixty-four workers read today's count of paid requests before any of them adds one: all
// sixty-four pass a budget of fifty.
func TestNaive_BudgetStormPassesTheCap(t *testing.T) {
	t.Parallel()
	const n = 64
	e := setup(t, "budget", n)
	for i := range n {
		e.do("POST", e.url, "/imports", map[string]string{"city": fmt.Sprintf("city %d", i)})
	}
	w := e.app.Worker()
	storm.Run(n, func(int) {
		if _, err := w.Step(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if got := e.source.Effects(); got != n {
		t.Errorf("%d paid searches today on a budget of %d, want %d", got, naive.PlacesDailyCap, n)
	}
}

// The nine-day outage with a per-day guard: the same outage alerts again every midnight,
// nine alerts for one outage; and when the source recovers and fails again on the same
// day, the second outage makes no alert at all.
func TestNaive_NineDayOutageAlertsDailyAndMissesTheSecondOutage(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	e.source.FailNext(1<<30, http.StatusPaymentRequired)
	w := e.app.Worker()
	for day := 1; day <= 9; day++ {
		for i := range 3 {
			e.do("POST", e.url, "/imports", map[string]string{"city": fmt.Sprintf("day %d city %d", day, i)})
		}
		e.drain(w)
		if got := emails(t, e.mail, "blocked"); got != day {
			t.Fatalf("day %d: %d blocked alerts, want %d: one a day for the same outage", day, got, day)
		}
		if day < 9 {
			e.clock.Add(24 * time.Hour)
		}
	}
	// Still day nine: credit is back, a search works; then the source fails again.
	e.source.FailNext(0, 0)
	e.do("POST", e.url, "/imports", map[string]string{"city": "recovery"})
	e.drain(w)
	e.source.FailNext(1<<30, http.StatusPaymentRequired)
	e.do("POST", e.url, "/imports", map[string]string{"city": "second outage"})
	e.drain(w)
	if got := emails(t, e.mail, "blocked"); got != 9 {
		t.Errorf("%d blocked alerts after a second outage the same day, want still 9: it goes unreported", got)
	}
}

// The same inbound message delivered 40 times across two instances: each instance's set
// lets it through once, so the brand is told twice, and the message is recorded twice.
func TestNaive_InboundSetLetsEachInstanceThrough(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	creator := fixture.SeedCreators(t, e.db, 1)[0]
	if code := e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator}); code != http.StatusCreated {
		t.Fatalf("opening a conversation: %d", code)
	}
	var token string
	if err := e.db.QueryRow(context.Background(), `SELECT token FROM outreach_threads`).Scan(&token); err != nil {
		t.Fatal(err)
	}
	_, second := e.instance(naive.Hooks{})
	msg := map[string]string{"message_id": "msg_001", "to": "reply+" + token + "@replies.outreach.test", "from": "creator1@creators.test", "text": "Yes!"}
	storm.Run(duplicates, func(i int) {
		url := e.url
		if i%2 == 1 {
			url = second
		}
		b, _ := json.Marshal(msg)
		resp, err := http.Post(url+"/webhooks/inbound", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	})
	if n := emails(t, e.mail, "reply"); n != 2 {
		t.Errorf("%d reply notifications for one message, want 2: one per instance", n)
	}
	if n := e.count(`SELECT count(*) FROM inbound_emails`); n != 2 {
		t.Errorf("%d inbound rows for one message, want 2", n)
	}
}

// A plan change clicked 32 times at once: the key comes from the clock, so the billing
// provider sees 32 different requests.
func TestNaive_PlanChangeKeyFromTheClockChangesEveryTime(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	storm.Run(32, func(int) { e.do("POST", e.url, "/billing/plan", map[string]string{"plan": "pro"}) })
	if n := e.billing.Changes.Effects(); n <= 1 {
		t.Errorf("%d plan changes at the billing provider, want more than 1", n)
	} else {
		t.Logf("%d plan changes for one click storm", n)
	}
}

// Events applied in arrival order: the event about the newest state arrives first, an
// older one after it, and the older state wins.
func TestNaive_WebhookAppliesPayloadsInArrivalOrder(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	newest := map[string]any{"type": "customer.subscription.updated", "data": map[string]any{"object": map[string]any{
		"customer": e.brand.CustomerID, "plan": "team", "status": "active", "updated_at": start.Add(2 * time.Hour)}}}
	older := map[string]any{"type": "customer.subscription.updated", "data": map[string]any{"object": map[string]any{
		"customer": e.brand.CustomerID, "plan": "pro", "status": "active", "updated_at": start.Add(time.Hour)}}}
	for _, ev := range []any{newest, older} {
		b, _ := json.Marshal(ev)
		resp, err := http.Post(e.url+"/webhooks/billing", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var plan string
	if err := e.db.QueryRow(context.Background(), `SELECT plan FROM subscriptions`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if plan != "pro" {
		t.Errorf("plan %q after the out-of-order delivery, want the stale \"pro\"", plan)
	}
}

// The email provider accepts the outreach email and the answer is lost: the retry carries
// no key, and the creator gets two emails.
func TestNaive_LostAnswerSendsTheEmailTwice(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	e.mail.DropAfterAccept(1)
	creator := fixture.SeedCreators(t, e.db, 1)[0]
	e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator})
	e.drain(e.app.Worker())
	if n := emails(t, e.mail, "outreach"); n != 2 {
		t.Errorf("%d outreach emails after one lost answer, want 2", n)
	}
}

// An unknown link is an error page.
func TestNaive_UnknownTokenIsAnError(t *testing.T) {
	t.Parallel()
	e := setup(t, "", 0)
	resp, err := http.Get(e.url + "/o/abcdefghjkmn")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("unknown token: %d, want the 500 the naive app answers", resp.StatusCode)
	}
}
