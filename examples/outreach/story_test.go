package outreach_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/internal/tally"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
	"github.com/oncekit/once/examples/outreach/naive"
	"github.com/oncekit/once/internal/fakeprovider"
)

// subject is one of the two apps under the same storm: outreach, or its naive twin.
type subject struct {
	name   string
	e      *env   // the world: database, providers, clock, brand
	second string // a second instance's URL
	drain  func() // runs the worker until nothing is due
}

// naiveDB is the naive twin's database as every scene starts from it.
var naiveDB = migrated.Database("outreach_naive", naive.Migrate)

// newSubject builds a fresh world for the named app. For the naive app, hold names the
// check at which n requests wait for each other (see naive.Hooks).
func newSubject(t *testing.T, name, hold string, n int) *subject {
	t.Helper()
	if name == "outreach" {
		e := setup(t)
		_, second := e.instance()
		return &subject{name: name, e: e, second: second, drain: func() { e.drain() }}
	}
	e := &env{t: t, db: naiveDB.New(t), mail: fakeprovider.New(t), source: fakeprovider.New(t), billing: fakebilling.New(t), clock: fixture.NewClock(start)}
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
	run           func(s *subject) []int // returns the counted effects, in the order of rows
	rows          []row
}

// row is one counted effect of a scene, with the count each app must leave.
type row struct {
	what         string
	app, naive   int
	naiveAtLeast bool // the naive count races on the clock: only "at least" is certain
}

var scenes = []scene{
	{what: "the same conversation opened 40 times at once", promise: "forever, table= (the insert is the check)", hold: "thread", holdN: duplicates,
		run: func(s *subject) []int {
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			storm.Run(duplicates, func(int) {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			})
			s.drain()
			return []int{s.e.count(`SELECT count(*) FROM outreach_threads`), emails(s.e.t, s.e.mail)["outreach"]}
		},
		rows: []row{{what: "conversations", app: 1, naive: duplicates}, {what: "emails to the creator", app: 1, naive: duplicates}}},
	{what: "40 conversations at once on a plan of 5", promise: "transaction (a lock per user around the count)", hold: "thread", holdN: duplicates,
		run: func(s *subject) []int {
			creators := fixture.SeedCreators(s.e.t, s.e.db, duplicates)
			storm.Run(duplicates, func(i int) {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creators[i]})
			})
			return []int{s.e.count(`SELECT count(*) FROM outreach_threads`)}
		},
		rows: []row{{what: "conversations", app: 5, naive: duplicates}}},
	{what: "35 starts refused at the limit", promise: "episode (naive: a request memo)",
		run: func(s *subject) []int {
			creators := fixture.SeedCreators(s.e.t, s.e.db, duplicates)
			for _, c := range creators {
				s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": c})
			}
			return []int{emails(s.e.t, s.e.mail)["limit"]}
		},
		rows: []row{{what: "\"limit reached\" emails", app: 1, naive: duplicates - 5}}},
	{what: "the same import queued 40 times at once", promise: "open, table= (unique while pending or running)", hold: "job", holdN: duplicates,
		run: func(s *subject) []int {
			storm.Run(duplicates, func(int) { s.e.do("POST", s.e.url, "/imports", map[string]string{"city": "Lisbon"}) })
			s.drain()
			return []int{s.e.count(`SELECT count(*) FROM jobs`), s.e.source.Effects()}
		},
		rows: []row{{what: "jobs", app: 1, naive: duplicates}, {what: "paid searches", app: 1, naive: duplicates}}},
	{what: "64 imports run at once on a budget of 50 a day", promise: "statement, table= (a conditional upsert)", hold: "budget", holdN: 64,
		run: func(s *subject) []int {
			for i := range 64 {
				s.e.do("POST", s.e.url, "/imports", map[string]string{"city": fmt.Sprintf("city %d", i)})
			}
			storm.Run(64, func(int) { s.drain() })
			return []int{s.e.source.Effects()}
		},
		rows: []row{{what: "paid searches", app: 50, naive: 64}}},
	{what: "a nine-day outage, then recovery and a new outage the same day", promise: "episode, table= (a latch rearmed by success)",
		run: func(s *subject) []int {
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
			return []int{during, emails(s.e.t, s.e.mail)["blocked"] - during}
		},
		rows: []row{{what: "alerts in the nine days", app: 1, naive: 9}, {what: "alerts for the second outage", app: 1, naive: 0}}},
	{what: "one reply delivered 40 times to two instances", promise: "forever, table= (naive: a set in memory)",
		run: func(s *subject) []int {
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			var token string
			if err := s.e.db.QueryRow(context.Background(), `SELECT token FROM outreach_threads`).Scan(&token); err != nil {
				s.e.t.Fatal(err)
			}
			msg := map[string]string{"message_id": "msg_1", "to": "reply+" + token + "@replies.outreach.test", "from": "creator1@creators.test", "text": "Yes!"}
			storm.Run(duplicates, func(i int) {
				url := s.e.url
				if i%2 == 1 {
					url = s.second
				}
				post(s.e.t, url+"/webhooks/inbound", msg)
			})
			s.drain()
			return []int{emails(s.e.t, s.e.mail)["reply"]}
		},
		rows: []row{{what: "notifications to the brand", app: 1, naive: 2}}},
	{what: "the outreach email's answer lost, the job retried", promise: "provider (a key from the conversation's row)",
		run: func(s *subject) []int {
			s.e.mail.DropAfterAccept(1)
			creator := fixture.SeedCreators(s.e.t, s.e.db, 1)[0]
			s.e.do("POST", s.e.url, "/threads", map[string]int64{"campaign_id": s.e.brand.CampaignID, "creator_id": creator})
			s.drain()
			s.e.clock.Add(time.Minute)
			s.drain()
			return []int{emails(s.e.t, s.e.mail)["outreach"]}
		},
		rows: []row{{what: "emails to the creator", app: 1, naive: 2}}},
	{what: "a plan change clicked 32 times at once", promise: "provider (a key from the subscription's updated-at)",
		run: func(s *subject) []int {
			storm.Run(32, func(int) { s.e.do("POST", s.e.url, "/billing/plan", map[string]string{"plan": "pro"}) })
			return []int{s.e.billing.Changes.Effects()}
		},
		rows: []row{{what: "plan changes at the billing provider", app: 1, naive: 2, naiveAtLeast: true}}},
	{what: "billing events delivered newest first", promise: "none (the truth re-read under a lock per customer)",
		run: func(s *subject) []int {
			s.e.billing.Set(fakebilling.State{Customer: s.e.brand.CustomerID, Plan: "team", Status: "active", UpdatedAt: start.Add(2 * time.Hour)})
			for _, plan := range []string{"team", "pro"} {
				ev := event("customer.subscription.updated", s.e.brand.CustomerID, plan)
				ev["data"].(map[string]any)["object"].(map[string]any)["updated_at"] = map[string]time.Time{"team": start.Add(2 * time.Hour), "pro": start.Add(time.Hour)}[plan]
				post(s.e.t, s.e.url+"/webhooks/billing", ev)
			}
			return []int{s.e.count(`SELECT count(*) FROM subscriptions WHERE plan = 'team'`)}
		},
		rows: []row{{what: "subscriptions left on the true plan (team)", app: 1, naive: 0}}},
}

// TestStory runs the story against both apps, one scene after another, each on a fresh
// world, and prints what each one left behind: the demo of this example (go test -run
// '^TestStory$' -v). Every number in the table is asserted as it is entered.
func TestStory(t *testing.T) {
	t.Parallel()
	tab := tally.New(t, "outreach: nine lengths of promise (lasting effects, counted)", "outreach", "naive")
	defer tab.Print()
	for _, sc := range scenes {
		app := sc.run(newSubject(t, "outreach", "", 0))
		twin := sc.run(newSubject(t, "naive", sc.hold, sc.holdN))
		tab.Scene(sc.what + " — " + sc.promise)
		for i, r := range sc.rows {
			naiveCell := tally.Is(twin[i], r.naive)
			if r.naiveAtLeast {
				naiveCell = tally.AtLeast(twin[i], r.naive)
			}
			tab.Row(r.what, tally.Is(app[i], r.app), naiveCell)
		}
	}
}
