package outreach_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
	"github.com/oncekit/once/examples/outreach/naive"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

// subject is one of the two apps under the same storm: outreach, or its naive twin.
type subject struct {
	name   string
	e      *env   // the world: database, providers, clock, brand
	second string // a second instance's URL
	drain  func() // runs the worker until nothing is due
}

// newSubject builds a fresh world for the named app. For the naive app, hold names the
// check at which n requests wait for each other (see naive.Hooks).
func newSubject(t *testing.T, name, hold string, n int) *subject {
	t.Helper()
	if name == "outreach" {
		e := setup(t)
		_, second := e.instance()
		return &subject{name: name, e: e, second: second, drain: func() { e.drain() }}
	}
	e := &env{t: t, db: pgtest.New(t), mail: fakeprovider.New(t), source: fakeprovider.New(t), billing: fakebilling.New(t), clock: fixture.NewClock(start)}
	if err := naive.Migrate(context.Background(), e.db); err != nil {
		t.Fatal(err)
	}
	e.brand = fixture.SeedBrand(t, e.db, "acme", "free", start.Add(-24*time.Hour))
	var hooks naive.Hooks
	if hold != "" {
		b := fixture.NewBarrier(n, time.Minute)
		hooks.Checked = func(what string) {
			if what == hold {
				b.Wait()
			}
		}
	}
	instance := func(hooks naive.Hooks) (*naive.App, string) {
		app, err := naive.New(naive.Config{DB: e.db, MailURL: e.mail.URL, SourceURL: e.source.URL, BillingURL: e.billing.URL, Now: e.clock.Now, Hooks: hooks})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(app.Handler())
		t.Cleanup(srv.Close)
		return app, srv.URL
	}
	app, url := instance(hooks)
	_, second := instance(naive.Hooks{})
	e.url = url
	return &subject{name: name, e: e, second: second, drain: func() {
		if _, err := app.Worker().Drain(context.Background()); err != nil {
			t.Error(err)
		}
	}}
}

// scene is one part of the story: the same actions against both apps, and what to count.
type scene struct {
	what, promise string
	hold          string // the naive app's check to hold open
	holdN         int
	run           func(s *subject) string // returns the counted effects, as text
}

var scenes = []scene{
	{"the same conversation opened 40 times at once", "forever, table= (the insert is the check)", "thread", storm,
		func(s *subject) string {
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			fixture.Storm(storm, func(int) {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			})
			s.drain()
			return fmt.Sprintf("%d conversations, %d emails", s.e.count(`SELECT count(*) FROM outreach_threads`), emails(s.e.t, s.e.mail)["outreach"])
		}},
	{"40 conversations at once on a plan of 5", "transaction (lock per user)", "thread", storm,
		func(s *subject) string {
			creators := fixture.SeedCreators(s.e.t, s.e.db, storm)
			fixture.Storm(storm, func(i int) {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creators[i]})
			})
			return fmt.Sprintf("%d conversations", s.e.count(`SELECT count(*) FROM outreach_threads`))
		}},
	{"'limit reached', 35 refused starts", "episode (naive: request memo)", "", 0,
		func(s *subject) string {
			creators := fixture.SeedCreators(s.e.t, s.e.db, storm)
			for _, c := range creators {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": c})
			}
			return fmt.Sprintf("%d emails", emails(s.e.t, s.e.mail)["limit"])
		}},
	{"the same import queued 40 times at once", "open, table= (unique while pending or running)", "job", storm,
		func(s *subject) string {
			fixture.Storm(storm, func(int) { s.e.do("POST", s.e.url, "/imports", map[string]string{"city": "Lisbon"}) })
			s.drain()
			return fmt.Sprintf("%d jobs, %d paid searches", s.e.count(`SELECT count(*) FROM jobs`), s.e.source.Effects())
		}},
	{"64 imports on a budget of 50 a day", "statement, table= (conditional upsert)", "budget", 64,
		func(s *subject) string {
			for i := range 64 {
				s.e.do("POST", s.e.url, "/imports", map[string]string{"city": fmt.Sprintf("city %d", i)})
			}
			fixture.Storm(64, func(int) { s.drain() })
			return fmt.Sprintf("%d paid searches", s.e.source.Effects())
		}},
	{"a nine-day outage, then recovery and a new outage the same day", "episode, table= (latch rearmed by success)", "", 0,
		func(s *subject) string {
			s.e.source.FailNext(1<<30, http.StatusPaymentRequired)
			for day := 1; day <= 9; day++ {
				for i := range 3 {
					s.e.do("POST", s.e.url, "/imports", map[string]string{"city": fmt.Sprintf("day %d city %d", day, i)})
				}
				s.drain()
				if day < 9 {
					s.e.clock.Add(24 * time.Hour)
				}
			}
			during := emails(s.e.t, s.e.mail)["blocked"]
			s.e.source.FailNext(0, 0)
			s.e.do("POST", s.e.url, "/imports", map[string]string{"city": "recovery"})
			s.drain()
			s.e.source.FailNext(1<<30, http.StatusPaymentRequired)
			s.e.do("POST", s.e.url, "/imports", map[string]string{"city": "second outage"})
			s.drain()
			return fmt.Sprintf("%d alerts in nine days, %d for the second outage", during, emails(s.e.t, s.e.mail)["blocked"]-during)
		}},
	{"one reply delivered 40 times to two instances", "forever, table= (naive: a set in memory)", "", 0,
		func(s *subject) string {
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			var token string
			s.e.db.QueryRow(context.Background(), `SELECT token FROM outreach_threads`).Scan(&token)
			msg := map[string]string{"message_id": "msg_1", "to": "reply+" + token + "@replies.outreach.test", "from": "creator1@creators.test", "text": "Yes!"}
			fixture.Storm(storm, func(i int) {
				url := s.e.url
				if i%2 == 1 {
					url = s.second
				}
				post(s.e.t, url+"/webhooks/inbound", msg)
			})
			s.drain()
			return fmt.Sprintf("%d notifications", emails(s.e.t, s.e.mail)["reply"])
		}},
	{"the outreach email's answer lost, the job retried", "provider (key from the conversation's row)", "", 0,
		func(s *subject) string {
			s.e.mail.DropAfterAccept(1)
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			s.drain()
			s.e.clock.Add(time.Minute)
			s.drain()
			return fmt.Sprintf("%d emails", emails(s.e.t, s.e.mail)["outreach"])
		}},
	{"a plan change clicked 32 times at once", "provider (key from the subscription's updated-at)", "", 0,
		func(s *subject) string {
			fixture.Storm(32, func(int) { s.e.do("POST", s.e.url, "/billing/plan", map[string]string{"plan": "pro"}) })
			return fmt.Sprintf("%d changes", s.e.billing.Changes.Effects())
		}},
	{"billing events delivered newest first", "none: re-read the truth under a lock per customer", "", 0,
		func(s *subject) string {
			s.e.billing.Set(fakebilling.State{Customer: s.e.brand.CustomerID, Plan: "team", Status: "active", UpdatedAt: start.Add(2 * time.Hour)})
			for _, plan := range []string{"team", "pro"} {
				ev := event("customer.subscription.updated", s.e.brand.CustomerID, plan)
				ev["data"].(map[string]any)["object"].(map[string]any)["updated_at"] = map[string]time.Time{"team": start.Add(2 * time.Hour), "pro": start.Add(time.Hour)}[plan]
				post(s.e.t, s.e.url+"/webhooks/billing", ev)
			}
			var plan string
			s.e.db.QueryRow(context.Background(), `SELECT plan FROM subscriptions`).Scan(&plan)
			return "plan " + plan + " (the truth: team)"
		}},
}

// TestStory runs the story against both apps and prints what each one left behind: the
// demo of this example (go test -run TestStory -v). It also checks the outreach column.
func TestStory(t *testing.T) {
	t.Parallel()
	want := []string{
		"1 conversations, 1 emails",
		"5 conversations",
		"1 emails",
		"1 jobs, 1 paid searches",
		"50 paid searches",
		"1 alerts in nine days, 1 for the second outage",
		"1 notifications",
		"1 emails",
		"1 changes",
		"plan team (the truth: team)",
	}
	// One scene after another, each on a fresh world: the output is the table alone.
	got := map[string][]string{}
	for _, name := range []string{"outreach", "naive"} {
		for _, sc := range scenes {
			got[name] = append(got[name], sc.run(newSubject(t, name, sc.hold, sc.holdN)))
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nwhat happened\tpromise\toutreach\tnaive")
	for i, sc := range scenes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sc.what, sc.promise, got["outreach"][i], got["naive"][i])
	}
	tw.Flush()
	t.Log(b.String())
	for i, w := range want {
		if got["outreach"][i] != w {
			t.Errorf("%s: outreach left %q, want %q", scenes[i].what, got["outreach"][i], w)
		}
		if got["naive"][i] == w {
			t.Errorf("%s: naive left %q too: the scene shows no difference", scenes[i].what, got["naive"][i])
		}
	}
}
