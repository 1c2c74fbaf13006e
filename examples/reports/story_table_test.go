package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/internal/tally"
	"github.com/oncekit/once/examples/reports/naive"
	"github.com/oncekit/once/internal/fakeprovider"
)

// twin is the naive app in a world of its own: a database, the two stand-in providers, and
// two replicas serving HTTP on loopback, with the accounts "acme" and "globex" and a
// submission each.
type twin struct {
	t           *testing.T
	pool        *pgxpool.Pool
	model, mail *fakeprovider.Server
	replicas    []*naive.Server
	urls        []string
	sub         map[string]int64
}

// naiveDB is the naive app's database as every scene starts from it.
var naiveDB = migrated.Database("reports_naive", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := naive.Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `WITH a AS (INSERT INTO accounts (id, email, token) VALUES ('acme', 'acme@example.test', 'acme-token'), ('globex', 'globex@example.test', 'globex-token'))
INSERT INTO submissions (account_id, title, body) VALUES ('acme', 'Q3 review', 'Quarterly numbers.'), ('globex', 'Q3 review', 'Quarterly numbers.')`)
	return err
})

func setupTwin(t *testing.T) *twin {
	t.Helper()
	n := &twin{t: t, pool: naiveDB.NewDatabase(t).Pool(t, 48), model: fakeprovider.New(t), mail: fakeprovider.New(t), sub: map[string]int64{}}
	for range 2 {
		s := naive.New(n.pool, n.model.URL, n.mail.URL)
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		n.replicas = append(n.replicas, s)
		n.urls = append(n.urls, srv.URL)
	}
	for _, account := range []string{"acme", "globex"} {
		var sub int64
		if err := n.pool.QueryRow(context.Background(), `SELECT id FROM submissions WHERE account_id = $1`, account).Scan(&sub); err != nil {
			t.Fatal(err)
		}
		n.sub[account] = sub
	}
	return n
}

// generate asks replica i for a report on the account's submission, and returns the job it
// was answered with (0 for an answer without one).
func (n *twin) generate(i int, account, key string, body any) int64 {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", fmt.Sprintf("%s/submissions/%d/reports", n.urls[i], n.sub[account]), bytes.NewReader(b))
	if err != nil {
		n.t.Error(err)
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+account+"-token")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	var j struct{ ID int64 }
	if resp.StatusCode != http.StatusAccepted || json.NewDecoder(resp.Body).Decode(&j) != nil {
		return 0
	}
	return j.ID
}

// work runs one pass of replica 0's worker; a pass the story makes fail returns its error.
func (n *twin) work() error { return n.replicas[0].Work(context.Background()) }

func (n *twin) count() effects {
	n.t.Helper()
	var e effects
	err := n.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM report_jobs), (SELECT count(*) FROM reports),
	(SELECT count(*) FROM usage)`).Scan(&e.Jobs, &e.Reports, &e.Usage)
	if err != nil {
		n.t.Fatal(err)
	}
	e.ModelCalls, e.Emails = n.model.EffectsAt("/v1/responses"), n.mail.EffectsAt("/v1/emails")
	return e
}

// TestStory runs the story end to end against the app and its naive twin, one scene after
// another, each on fresh worlds, and prints what each left behind (go test -run
// '^TestStory$' -v). Every number in the table is asserted as it is entered. The naive
// twin's races are held open at the point between check and write (AfterCheck, AfterPick)
// until every racer is there, so its counts are exact.
func TestStory(t *testing.T) {
	t.Parallel()
	tab := tally.New(t, "reports: one intention, one report (lasting effects, counted)", "reports", "naive")
	defer tab.Print()
	rows := func(a, n effects, want, naiveWant effects) {
		tab.Row("jobs", tally.Is(a.Jobs, want.Jobs), tally.Is(n.Jobs, naiveWant.Jobs))
		tab.Row("reports", tally.Is(a.Reports, want.Reports), tally.Is(n.Reports, naiveWant.Reports))
		tab.Row("usage rows", tally.Is(a.Usage, want.Usage), tally.Is(n.Usage, naiveWant.Usage))
		tab.Row("model calls", tally.Is(a.ModelCalls, want.ModelCalls), tally.Is(n.ModelCalls, naiveWant.ModelCalls))
		tab.Row("emails", tally.Is(a.Emails, want.Emails), tally.Is(n.Emails, naiveWant.Emails))
	}
	one := effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1}

	// 1. One reference from 32 clients at once, across two replicas; then a worker pass.
	// The naive twin's requests all look for the job before any inserts one.
	const clients = 32
	w, n := setup(t, options{replicas: 2, conns: 48}), setupTwin(t)
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	storm.Run(clients, func(i int) {
		if _, err := w.try(i%2, "POST", reportsPath(sub), "acme-token", "generate-q3", input); err != nil {
			t.Error(err)
		}
	})
	w.work()
	hold := storm.Hold(t, clients)
	for _, s := range n.replicas {
		s.AfterCheck = hold
	}
	storm.Run(clients, func(i int) { n.generate(i%2, "acme", "generate-q3", input) })
	if err := n.work(); err != nil {
		t.Fatal(err)
	}
	tab.Scene(fmt.Sprintf("one reference sent by %d clients at once, then a worker pass", clients))
	rows(w.count(), n.count(), one, effects{Jobs: clients, Reports: clients, Usage: clients, ModelCalls: clients, Emails: clients})

	// 2. One job, picked up by two workers (one per replica) at once.
	w, n = setup(t, options{replicas: 2}), setupTwin(t)
	sub = w.submit("acme-token", "submit-q3", "Q3 review")
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)
	storm.Run(2, func(i int) {
		if _, err := w.replicas[i].Work(context.Background()); err != nil {
			t.Error(err)
		}
	})
	w.work() // delivers an email a pass may have found not yet enqueued
	n.generate(0, "acme", "generate-q3", input)
	hold = storm.Hold(t, 2)
	for _, s := range n.replicas {
		s.AfterPick = hold
	}
	storm.Run(2, func(i int) {
		if err := n.replicas[i].Work(context.Background()); err != nil {
			t.Error(err)
		}
	})
	tab.Scene("one job picked up by two workers at once")
	rows(w.count(), n.count(), one, effects{Jobs: 1, Reports: 2, Usage: 2, ModelCalls: 2, Emails: 2})

	// 3. The model ran the call, and its answer was lost on the way back; the job is
	// retried.
	w, n = setup(t, options{}), setupTwin(t)
	sub = w.submit("acme-token", "submit-q3", "Q3 review")
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)
	w.model.DropAfterAccept(1)
	w.work()
	w.work()
	n.generate(0, "acme", "generate-q3", input)
	n.model.DropAfterAccept(1)
	if err := n.work(); err == nil {
		t.Error("the naive pass with the model's answer lost reported no error")
	}
	if err := n.work(); err != nil {
		t.Fatal(err)
	}
	tab.Scene("the model's answer lost, the job retried")
	rows(w.count(), n.count(), one, effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 2, Emails: 1})

	// 4. The email service fails once, after the report is made.
	w, n = setup(t, options{}), setupTwin(t)
	sub = w.submit("acme-token", "submit-q3", "Q3 review")
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)
	w.mail.FailNext(1, http.StatusServiceUnavailable)
	w.work()
	w.work()
	n.generate(0, "acme", "generate-q3", input)
	n.mail.FailNext(1, http.StatusServiceUnavailable)
	if err := n.work(); err == nil {
		t.Error("the naive pass with the email service down reported no error")
	}
	if err := n.work(); err != nil {
		t.Fatal(err)
	}
	tab.Scene("the email service down once, the job retried")
	rows(w.count(), n.count(), one, effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 2, Emails: 1})

	// 5. Two accounts send the same reference, and one account reuses its reference with
	// other input.
	w, n = setup(t, options{}), setupTwin(t)
	acme, globex := w.submit("acme-token", "submit", "Acme Q3"), w.submit("globex-token", "submit", "Globex Q3")
	aj := w.do(0, "POST", reportsPath(acme), "acme-token", "weekly", input).job(t)
	gj := w.do(0, "POST", reportsPath(globex), "globex-token", "weekly", input).job(t)
	reused := w.do(0, "POST", reportsPath(acme), "acme-token", "weekly", map[string]any{"tone": "plain"})
	if reused.status != http.StatusUnprocessableEntity {
		t.Errorf("the app answered the reuse with other input %d %s, want 422", reused.status, reused.body)
	}
	acmeJob := n.generate(0, "acme", "weekly", input)
	globexJob := n.generate(0, "globex", "weekly", input)
	naiveReused := n.generate(0, "acme", "weekly", map[string]any{"tone": "plain"})
	if acmeJob == 0 {
		t.Fatal("the naive twin answered the first request with no job")
	}
	tab.Scene("one reference from two accounts, then reused with other input")
	tab.Row("jobs", tally.Is(w.count().Jobs, 2), tally.Is(n.count().Jobs, 1))
	tab.Row("the second account answered with the first's job", tally.Is(gj.ID == aj.ID, false), tally.Is(globexJob == acmeJob, true))
	tab.Row("the reuse answered with the old job", tally.Is(reused.status == http.StatusAccepted, false), tally.Is(naiveReused == acmeJob, true))
}
