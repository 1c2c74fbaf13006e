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

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/reports/naive"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

// These tests fire at the naive app what the reports app's tests fire at it, and count the
// same lasting effects. Each race the naive app has is made to happen every time by holding
// the racers at the point between their check and their write (AfterCheck, AfterPick) until
// enough of them are there: the hooks widen the window, they do not make it.

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var input = map[string]any{"tone": "formal", "sections": []string{"revenue", "risks"}}

type world struct {
	t           *testing.T
	pool        *pgxpool.Pool
	model, mail *fakeprovider.Server
	replicas    []*naive.Server
	urls        []string
	sub         map[string]int64 // each account's submission
}

// migratedDB is the naive app's database as every test starts from it: its tables, and the
// accounts "acme" and "globex" with a submission each.
var migratedDB = migrated.Database("naive", func(ctx context.Context, db *pgxpool.Pool) error {
	if err := naive.Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `WITH a AS (INSERT INTO accounts (id, email, token) VALUES ('acme', 'acme@example.test', 'acme-token'), ('globex', 'globex@example.test', 'globex-token'))
INSERT INTO submissions (account_id, title, body) VALUES ('acme', 'Q3 review', 'Quarterly numbers.'), ('globex', 'Q3 review', 'Quarterly numbers.')`)
	return err
})

func setup(t *testing.T, conns int) *world {
	t.Helper()
	w := &world{t: t, pool: migratedDB.NewDatabase(t).Pool(t, conns), sub: map[string]int64{}}
	w.model, w.mail = fakeprovider.New(t), fakeprovider.New(t)
	for range 2 {
		s := naive.New(w.pool, w.model.URL, w.mail.URL)
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		w.replicas = append(w.replicas, s)
		w.urls = append(w.urls, srv.URL)
	}
	rows, err := w.pool.Query(context.Background(), `SELECT account_id, id FROM submissions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var account string
		var sub int64
		if err := rows.Scan(&account, &sub); err != nil {
			t.Fatal(err)
		}
		w.sub[account] = sub
	}
	if err := rows.Err(); err != nil || len(w.sub) != 2 {
		t.Fatalf("the accounts' submissions: %v (%d found)", err, len(w.sub))
	}
	return w
}

type jobView struct {
	ID         int64
	State      string
	Submission int64
	Reference  string
}

// generate posts a report request to replica i and returns the job it was answered with.
func (w *world) generate(i int, account, key string, body any) (jobView, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", fmt.Sprintf("%s/submissions/%d/reports", w.urls[i], w.sub[account]), bytes.NewReader(b))
	if err != nil {
		return jobView{}, err
	}
	req.Header.Set("Authorization", "Bearer "+account+"-token")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return jobView{}, err
	}
	defer resp.Body.Close()
	payload, _ := io.ReadAll(resp.Body)
	var j jobView
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(payload, &j) != nil {
		return jobView{}, fmt.Errorf("answer %d %s, want 202 with a job", resp.StatusCode, payload)
	}
	return j, nil
}

func (w *world) mustGenerate(i int, account, key string, body any) jobView {
	w.t.Helper()
	j, err := w.generate(i, account, key, body)
	if err != nil {
		w.t.Fatal(err)
	}
	return j
}

type effects struct {
	Jobs, Reports, Usage, ModelCalls, Emails int
}

func (w *world) count() effects {
	w.t.Helper()
	var e effects
	err := w.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM report_jobs), (SELECT count(*) FROM reports),
	(SELECT count(*) FROM usage)`).Scan(&e.Jobs, &e.Reports, &e.Usage)
	if err != nil {
		w.t.Fatal(err)
	}
	e.ModelCalls, e.Emails = w.model.EffectsAt("/v1/responses"), w.mail.EffectsAt("/v1/emails")
	return e
}

func TestNaive_StormOfDuplicatesMakesDuplicates(t *testing.T) {
	t.Parallel()
	w := setup(t, 48)
	// The storm the reports app gets: 32 clients across two replicas, then 8 workers. Every
	// client is held between its look-up and its insert until all have looked.
	const clients = 32
	check := storm.Hold(t, clients)
	for _, s := range w.replicas {
		s.AfterCheck = check
	}
	errs := make([]error, clients)
	storm.Run(clients, func(i int) { _, errs[i] = w.generate(i%2, "acme", "generate-q3", input) })
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pick := storm.Hold(t, 2)
	for _, s := range w.replicas {
		s.AfterPick = pick
	}
	const workers = 8
	storm.Run(workers, func(i int) { errs[i] = w.replicas[i%2].Work(context.Background()) })
	for _, err := range errs[:workers] {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := w.count()
	t.Logf("one intention, counted: %+v", got)
	// A job per client, each carried out at least once (and again by every worker whose
	// pass read it queued and reached it after the set had let it go): at least a report,
	// a usage row, a model call and an email per client.
	if got.Jobs != clients || got.Reports < clients || got.Usage < clients || got.ModelCalls < clients || got.Emails < clients {
		t.Fatalf("counted %+v, want %d jobs and at least %d of every other effect", got, clients, clients)
	}
}

func TestNaive_TwoWorkersCarryOutOneJobTwice(t *testing.T) {
	t.Parallel()
	w := setup(t, 16)
	w.mustGenerate(0, "acme", "generate-q3", input)
	pick := storm.Hold(t, 2)
	for _, s := range w.replicas {
		s.AfterPick = pick
	}
	errs := make([]error, 2)
	storm.Run(2, func(i int) { errs[i] = w.replicas[i].Work(context.Background()) })
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := w.count(), (effects{Jobs: 1, Reports: 2, Usage: 2, ModelCalls: 2, Emails: 2}); got != want {
		t.Fatalf("one job, two workers: counted %+v, want %+v", got, want)
	}
}

func TestNaive_AnotherAccountIsAnsweredWithTheFirstAccountsJob(t *testing.T) {
	t.Parallel()
	w := setup(t, 16)
	acme := w.mustGenerate(0, "acme", "weekly", input)
	globex := w.mustGenerate(0, "globex", "weekly", input)
	if globex.ID != acme.ID || globex.Submission != w.sub["acme"] {
		t.Fatalf("globex got %+v; acme's job is %+v", globex, acme)
	}
	// globex's report was never queued.
	if got := w.count(); got.Jobs != 1 {
		t.Fatalf("counted %+v", got)
	}
}

func TestNaive_ChangedInputGetsTheOldJobSilently(t *testing.T) {
	t.Parallel()
	w := setup(t, 16)
	first := w.mustGenerate(0, "acme", "generate-q3", input)
	changed := w.mustGenerate(0, "acme", "generate-q3", map[string]any{"tone": "plain"})
	if changed.ID != first.ID {
		t.Fatalf("changed input: job %d, first %d", changed.ID, first.ID)
	}
	var stored string
	if err := w.pool.QueryRow(context.Background(), `SELECT input->>'tone' FROM report_jobs`).Scan(&stored); err != nil || stored != "formal" {
		t.Fatalf("stored tone %q, %v: the plain report the customer asked for is not what will be made", stored, err)
	}
}

func TestNaive_InterruptedAfterTheModelAcceptedBillsTwice(t *testing.T) {
	t.Parallel()
	w := setup(t, 16)
	w.mustGenerate(0, "acme", "generate-q3", input)
	w.model.DropAfterAccept(1)
	if err := w.replicas[0].Work(context.Background()); err == nil {
		t.Fatal("the pass with the answer lost reported no error")
	}
	if err := w.replicas[0].Work(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := w.count(), (effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 2, Emails: 1}); got != want {
		t.Fatalf("counted %+v, want %+v", got, want)
	}
}

func TestNaive_AFailingEmailMakesTheReportAgain(t *testing.T) {
	t.Parallel()
	w := setup(t, 16)
	w.mustGenerate(0, "acme", "generate-q3", input)
	w.mail.FailNext(1, http.StatusServiceUnavailable)
	if err := w.replicas[0].Work(context.Background()); err == nil {
		t.Fatal("the pass with the email service down reported no error")
	}
	if err := w.replicas[0].Work(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := w.count(), (effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 2, Emails: 1}); got != want {
		t.Fatalf("counted %+v, want %+v", got, want)
	}
}
