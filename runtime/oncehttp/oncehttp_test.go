package oncehttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceops"
	"github.com/oncekit/once/runtime/onceschema"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// reportsApp is the product under test: POST /reports generates a report with one paid model
// call, saves it, counts one report of usage and emails its owner afterwards.
type reportsApp struct {
	db    *pgxpool.Pool
	model *fakeprovider.Server
	// dedupes says whether the model provider honours idempotency keys; when it does not,
	// a lost answer makes the operation uncertain.
	dedupes bool
	// hold, when set, keeps every request at the model call until it is closed.
	hold <-chan struct{}
}

type reportRequest struct {
	Source  string         `json:"source"`
	Options map[string]any `json:"options"`
}

type reportResponse struct {
	ReportID  int64  `json:"report_id"`
	ModelCall string `json:"model_call"`
}

func (app *reportsApp) generate(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	at, ok := once.AttemptFrom(ctx)
	if !ok {
		http.Error(w, "not behind the idempotency middleware", http.StatusInternalServerError)
		return
	}
	var req reportRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Source == "" {
		http.Error(w, "a report needs a source", http.StatusBadRequest)
		return
	}
	if app.hold != nil {
		select {
		case <-app.hold:
		case <-time.After(20 * time.Second):
		}
	}
	call, err := app.model.Post(ctx, "/v1/generate", at.ProviderKey("generate"), req)
	if err == nil && call.Status != http.StatusOK {
		err = errors.New("model answered " + strconv.Itoa(call.Status))
	}
	if err != nil {
		if !app.dedupes {
			// The model may have run and billed; asking again could run it twice.
			at.Uncertain(err)
		}
		http.Error(w, "model call failed", http.StatusBadGateway)
		return
	}
	id, err := once.Step(ctx, app.db, at, "save", func(ctx context.Context, tx pgx.Tx) (int64, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO reports (account, operation_id, model_call) VALUES ($1, $2, $3) RETURNING id`,
			at.Scope(), at.ID(), call.ID).Scan(&id)
		return id, err
	})
	if err == nil {
		err = errors.Join(
			at.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1}),
			at.FollowUp("email-owner", map[string]any{"account": at.Scope(), "report": id}),
		)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/reports/"+strconv.FormatInt(id, 10))
	w.Header().Set("X-Not-Replayed", "1")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(reportResponse{ReportID: id, ModelCall: call.ID})
}

// bearer is the tests' authentication: "Authorization: Bearer <account>".
func bearer(r *http.Request) (string, error) {
	a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", errors.New("no bearer token")
	}
	return a, nil
}

type fixture struct {
	app  *reportsApp
	pool *pgxpool.Pool
	srv  *httptest.Server
}

// fixtureOptions vary the reports app a test runs.
type fixtureOptions struct {
	configure     func(*oncehttp.Config) // adjusts the middleware's Config
	modelLatency  time.Duration          // how long each model call takes
	noIdempotency bool                   // the model provider cannot deduplicate
	hold          <-chan struct{}        // keeps requests at the model call until closed
}

// newFixture starts the reports app behind the middleware on a loopback server, with its own
// database and fake model provider.
func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	pool := pgtest.NewDatabase(t).Pool(t, 24)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE reports (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		account text NOT NULL,
		operation_id uuid NOT NULL UNIQUE,
		model_call text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	opts := []fakeprovider.Option{fakeprovider.WithLatency(o.modelLatency)}
	if o.noIdempotency {
		opts = append(opts, fakeprovider.WithoutIdempotency())
	}
	app := &reportsApp{db: pool, model: fakeprovider.New(t, opts...), dedupes: !o.noIdempotency, hold: o.hold}
	cfg := oncehttp.Config{DB: pool, Account: bearer, Name: "reports.generate", Required: true}
	if o.configure != nil {
		o.configure(&cfg)
	}
	mw, err := oncehttp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/reports", mw(http.HandlerFunc(app.generate)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &fixture{app: app, pool: pool, srv: srv}
}

type response struct {
	status int
	header http.Header
	body   string
}

func (r response) report(t *testing.T) reportResponse {
	t.Helper()
	var rep reportResponse
	if err := json.Unmarshal([]byte(r.body), &rep); err != nil || rep.ReportID == 0 {
		t.Fatalf("response %d %q is not a report: %v", r.status, r.body, err)
	}
	return rep
}

func (r response) problemType(t *testing.T) string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("response %d has Content-Type %q, want application/problem+json", r.status, ct)
	}
	var p struct{ Type string }
	json.Unmarshal([]byte(r.body), &p)
	return p.Type
}

// post sends POST /reports as account with the Idempotency-Key field key ("" for none).
func (f *fixture) post(t *testing.T, account, key, body string) response {
	t.Helper()
	r, err := f.send(account, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is post for goroutines other than the test's, which must not call t.Fatal.
func (f *fixture) send(account, key, body string) (response, error) {
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/reports", strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+account)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}, err
}

// counts are the lasting effects: reports saved, model calls made, usage rows written.
type counts struct{ reports, modelCalls, usage int }

func (f *fixture) counts(t *testing.T) counts {
	t.Helper()
	var c counts
	err := f.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM reports),
		(SELECT count(*) FROM once.ledger WHERE kind = 'usage')`).Scan(&c.reports, &c.usage)
	if err != nil {
		t.Fatal(err)
	}
	c.modelCalls = f.app.model.EffectsAt("/v1/generate")
	return c
}

const q3 = `{"source": "q3.csv", "options": {"format": "pdf", "charts": ["revenue", "churn"]}}`

// Must show 1: the same reference from 100 concurrent clients makes one report, one model
// call, one usage row. While the first is running the others get 409: the first is held at
// its model call until all 99 have been answered. With Wait they get the same report: the
// first takes 300ms, and whoever arrives meanwhile waits for it.
func TestMiddleware_HundredConcurrentClientsMakeOneReport(t *testing.T) {
	t.Parallel()
	const clients = 100
	for _, c := range []struct {
		name string
		wait time.Duration
	}{{"answer 409 while in flight", 0}, {"wait for the first", 20 * time.Second}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := fixtureOptions{configure: func(cfg *oncehttp.Config) { cfg.Wait = c.wait }}
			hold := make(chan struct{})
			if c.wait == 0 {
				o.hold = hold
			} else {
				o.modelLatency = 300 * time.Millisecond
			}
			f := newFixture(t, o)
			resps := make([]response, clients)
			var answered atomic.Int64
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					<-start
					r, err := f.send("acct-a", `"ref-1"`, q3)
					if err != nil {
						t.Error(err)
					}
					resps[i] = r
					if r.status == http.StatusConflict && answered.Add(1) == clients-1 {
						close(hold)
					}
				})
			}
			close(start)
			wg.Wait()
			if got := f.counts(t); got != (counts{1, 1, 1}) {
				t.Fatalf("%+v from %d clients, want one report, one model call, one usage row", got, clients)
			}
			var created, replayed, inFlight int
			var id int64
			for _, r := range resps {
				switch {
				case r.status == http.StatusCreated:
					rep := r.report(t)
					if id != 0 && rep.ReportID != id {
						t.Fatalf("two reports answered: %d and %d", id, rep.ReportID)
					}
					id = rep.ReportID
					if r.header.Get("Idempotent-Replayed") == "true" {
						replayed++
					} else {
						created++
					}
				case r.status == http.StatusConflict && r.problemType(t) == oncehttp.ProblemInFlight:
					inFlight++
				default:
					t.Fatalf("unexpected response %d %q", r.status, r.body)
				}
			}
			if created != 1 {
				t.Fatalf("%d original answers, want 1", created)
			}
			if c.wait > 0 && replayed != clients-1 {
				t.Fatalf("waiting: %d replays, %d conflicts; want %d replays", replayed, inFlight, clients-1)
			}
			if c.wait == 0 && inFlight != clients-1 {
				t.Fatalf("%d answered in flight and %d replays while the first was held, want %d in flight", inFlight, replayed, clients-1)
			}
		})
	}
}

// Must show 2: a repeat after completion gets the recorded response with the replay marker,
// and nothing happens again.
func TestMiddleware_RepeatAfterCompletionIsReplayed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	first := f.post(t, "acct-a", `"ref-1"`, q3)
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	again := f.post(t, "acct-a", `"ref-1"`, `{"options": {"charts": ["revenue", "churn"], "format": "pdf"}, "source": "q3.csv"}`)
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || again.body != first.body {
		t.Fatalf("repeat: %d %v %q; want the first response replayed", again.status, again.header, again.body)
	}
	if again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Content-Type") != "application/json" {
		t.Fatalf("replayed headers %v, want Location and Content-Type of %v", again.header, first.header)
	}
	if again.header.Get("X-Not-Replayed") != "" {
		t.Fatal("a header outside ReplayHeaders was replayed")
	}
	if got := f.counts(t); got != (counts{1, 1, 1}) {
		t.Fatalf("%+v after a repeat, want 1 of each", got)
	}
}

// Must show 3: the key reused with a changed input, even a nested field, is refused with
// 422 and does nothing.
func TestMiddleware_ReuseWithChangedInputIs422(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	if r := f.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusCreated {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	for _, body := range []string{
		`{"source": "q4.csv", "options": {"format": "pdf", "charts": ["revenue", "churn"]}}`,
		`{"source": "q3.csv", "options": {"format": "pdf", "charts": ["revenue"]}}`,
		`{"source": "q3.csv", "options": {"format": "png", "charts": ["revenue", "churn"]}}`,
	} {
		r := f.post(t, "acct-a", `"ref-1"`, body)
		if r.status != http.StatusUnprocessableEntity || r.problemType(t) != oncehttp.ProblemMismatch {
			t.Fatalf("reuse with %s: %d %s; want 422", body, r.status, r.body)
		}
	}
	if got := f.counts(t); got != (counts{1, 1, 1}) {
		t.Fatalf("%+v after refused reuses, want 1 of each", got)
	}
}

// Must show 4: the same reference from another account is another operation, and neither
// account can read the other's.
func TestMiddleware_SameReferenceFromAnotherAccountIsIndependent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	a := f.post(t, "acct-a", `"ref-1"`, q3)
	b := f.post(t, "acct-b", `"ref-1"`, q3)
	if a.status != http.StatusCreated || b.status != http.StatusCreated || b.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("a %d, b %d %v; want two original answers", a.status, b.status, b.header)
	}
	ra, rb := a.report(t), b.report(t)
	if ra.ReportID == rb.ReportID || ra.ModelCall == rb.ModelCall {
		t.Fatalf("accounts share a report: %+v and %+v", ra, rb)
	}
	if again := f.post(t, "acct-b", `"ref-1"`, q3); again.report(t) != rb {
		t.Fatalf("acct-b's replay is %q, want its own report", again.body)
	}
	if _, err := onceops.Lookup(context.Background(), f.pool, "reports.generate", "acct-c", "ref-1"); !errors.Is(err, onceops.ErrNoOperation) {
		t.Fatalf("acct-c looking up ref-1: %v, want ErrNoOperation", err)
	}
	var owners int
	f.pool.QueryRow(context.Background(), `SELECT count(DISTINCT account) FROM reports`).Scan(&owners)
	if got := f.counts(t); got != (counts{2, 2, 2}) || owners != 2 {
		t.Fatalf("%+v for %d accounts, want 2 of each", got, owners)
	}
}

// Must show 5: the model provider accepts the call and the connection drops. With a
// provider that deduplicates, the handler answers 502, the key is released, and the
// client's retry repeats the call with the same provider key: one model call, and the
// operation ends done. With a provider that cannot deduplicate, the operation ends
// uncertain, is listed, and the retry is refused instead of calling again.
func TestMiddleware_InterruptAfterTheProviderAccepted(t *testing.T) {
	t.Parallel()
	t.Run("deduplicating provider", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{})
		f.app.model.DropAfterAccept(1)
		if r := f.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusBadGateway {
			t.Fatalf("interrupted: %d %s, want 502", r.status, r.body)
		}
		r := f.post(t, "acct-a", `"ref-1"`, q3)
		if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry: %d %s, want the handler to run again and succeed", r.status, r.body)
		}
		if r.report(t).ModelCall != f.app.model.Log()[0].ID {
			t.Fatalf("report names model call %s, want the first (replayed by the provider)", r.report(t).ModelCall)
		}
		if got := f.counts(t); got != (counts{1, 1, 1}) {
			t.Fatalf("%+v, want 1 of each", got)
		}
		rec, err := onceops.Lookup(context.Background(), f.pool, "reports.generate", "acct-a", "ref-1")
		if err != nil || rec.State != "done" || rec.Attempts != 2 {
			t.Fatalf("operation %+v, %v; want done after 2 attempts", rec, err)
		}
	})
	t.Run("provider without idempotency", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{noIdempotency: true})
		f.app.model.DropAfterAccept(1)
		if r := f.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusBadGateway {
			t.Fatalf("interrupted: %d %s, want 502", r.status, r.body)
		}
		r := f.post(t, "acct-a", `"ref-1"`, q3)
		if r.status != http.StatusConflict || r.problemType(t) != oncehttp.ProblemUncertain {
			t.Fatalf("retry: %d %s, want 409 uncertain", r.status, r.body)
		}
		list, err := onceops.ListUncertain(context.Background(), f.pool, "reports.generate", 0)
		if err != nil || len(list) != 1 || list[0].Scope != "acct-a" || list[0].Key != "ref-1" {
			t.Fatalf("ListUncertain = %+v, %v; want acct-a's ref-1", list, err)
		}
		if got := f.counts(t); got != (counts{0, 1, 0}) {
			t.Fatalf("%+v, want the one model call and nothing else", got)
		}
	})
}

// Must show 6: a retry just inside the retention window is replayed; just after it, it runs
// as new work.
func TestMiddleware_RetentionWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{configure: func(cfg *oncehttp.Config) { cfg.Retain = 2 * time.Hour }})
	first := f.post(t, "acct-a", `"ref-1"`, q3)
	ctx := context.Background()
	var kept float64
	f.pool.QueryRow(ctx, `SELECT extract(epoch FROM expires_at - settled_at) FROM once.operations`).Scan(&kept)
	if kept != 7200 {
		t.Fatalf("kept for %vs, want Retain (7200s)", kept)
	}
	endIn := func(d string) {
		if _, err := f.pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() + $1::interval`, d); err != nil {
			t.Fatal(err)
		}
	}
	endIn("1 second")
	if r := f.post(t, "acct-a", `"ref-1"`, q3); r.header.Get("Idempotent-Replayed") != "true" || r.body != first.body {
		t.Fatalf("just inside the window: %d %v", r.status, r.header)
	}
	endIn("-1 millisecond")
	r := f.post(t, "acct-a", `"ref-1"`, q3)
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" || r.report(t) == first.report(t) {
		t.Fatalf("just after the window: %d %v %s; want a new report", r.status, r.header, r.body)
	}
	if got := f.counts(t); got != (counts{2, 2, 2}) {
		t.Fatalf("%+v, want 2 of each", got)
	}
}

// Must show 7: the email follow-up fails once (accepted, then the connection dropped) and is
// retried by the drain alone: the owner gets one email, the report was made once.
func TestMiddleware_FollowUpFailureRetriedEmailsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	mail := fakeprovider.New(t)
	if r := f.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusCreated {
		t.Fatalf("%d %s", r.status, r.body)
	}
	ctx := context.Background()
	drain := onceops.Drain{Backoff: time.Millisecond, Deliver: map[string]func(context.Context, onceops.FollowUp) error{
		"email-owner": func(ctx context.Context, fu onceops.FollowUp) error {
			r, err := mail.Post(ctx, "/v1/emails", fu.ProviderKey, fu.Payload)
			if err == nil && r.Status != http.StatusOK {
				err = errors.New("mail answered " + strconv.Itoa(r.Status))
			}
			return err
		},
	}}
	mail.DropAfterAccept(1)
	for range 3 {
		if _, err := drain.Run(ctx, f.pool); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := f.post(t, "acct-a", `"ref-1"`, q3); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("client retry: %d %v", r.status, r.header)
	}
	if mail.Effects() != 1 || mail.Requests() != 2 {
		t.Fatalf("%d emails from %d deliveries, want 1 from 2", mail.Effects(), mail.Requests())
	}
	if got := f.counts(t); got != (counts{1, 1, 1}) {
		t.Fatalf("%+v, want the paid work once", got)
	}
}

func TestMiddleware_RefusesBadRequestsBeforeAnyWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	cases := []struct {
		name, account, key string
		status             int
		problem            string
	}{
		{"missing key", "acct-a", "", http.StatusBadRequest, oncehttp.ProblemKeyMissing},
		{"bare key with a space", "acct-a", "ref 1", http.StatusBadRequest, oncehttp.ProblemKeyMalformed},
		{"empty string", "acct-a", `""`, http.StatusBadRequest, oncehttp.ProblemKeyMalformed},
		{"parameters", "acct-a", `"ref-1";a=1`, http.StatusBadRequest, oncehttp.ProblemKeyMalformed},
		{"a list", "acct-a", `"ref-1", "ref-2"`, http.StatusBadRequest, oncehttp.ProblemKeyMalformed},
		{"no account", "", `"ref-1"`, http.StatusUnauthorized, oncehttp.ProblemUnauthenticated},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/reports", strings.NewReader(q3))
		if c.account != "" {
			req.Header.Set("Authorization", "Bearer "+c.account)
		}
		if c.key != "" {
			req.Header.Set("Idempotency-Key", c.key)
		}
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := response{status: resp.StatusCode, header: resp.Header, body: string(b)}
		if r.status != c.status || r.problemType(t) != c.problem {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.problem)
		}
	}
	// A safe method passes through without a key (and the handler, which needs the
	// middleware for POSTs, sees no attempt).
	resp, err := f.srv.Client().Get(f.srv.URL + "/reports")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("GET: %d, want the handler's own answer", resp.StatusCode)
	}
	var ops int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM once.operations`).Scan(&ops); err != nil {
		t.Fatal(err)
	}
	if got := f.counts(t); got != (counts{}) || ops != 0 {
		t.Fatalf("%+v and %d operations after refused requests, want nothing", got, ops)
	}
}

// A request the handler refuses before doing anything (its 400) is not recorded: the
// client corrects it and sends it again under the same key, and it runs. The negative
// control records every 4xx (Unrecorded: []int{}): the 400 is then replayed, and the
// corrected request is refused as a reused key.
func TestMiddleware_ValidationFailureIsNotRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{})
		if r := f.post(t, "acct-a", `"ref-1"`, `{}`); r.status != http.StatusBadRequest {
			t.Fatalf("%d %s, want the handler's 400", r.status, r.body)
		}
		var ops int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM once.operations`).Scan(&ops); err != nil {
			t.Fatal(err)
		}
		if ops != 0 {
			t.Fatalf("%d operations after a refused request, want none", ops)
		}
		first := f.post(t, "acct-a", `"ref-1"`, q3)
		if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected request: %d %v %s, want it to run", first.status, first.header, first.body)
		}
		again := f.post(t, "acct-a", `"ref-1"`, q3)
		if again.header.Get("Idempotent-Replayed") != "true" || again.body != first.body {
			t.Fatalf("repeat of the corrected request: %d %v, want its replay", again.status, again.header)
		}
		if got := f.counts(t); got != (counts{1, 1, 1}) {
			t.Fatalf("%+v, want 1 of each", got)
		}
	})
	t.Run("every 4xx recorded", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{configure: func(cfg *oncehttp.Config) { cfg.Unrecorded = []int{} }})
		if r := f.post(t, "acct-a", `"ref-1"`, `{}`); r.status != http.StatusBadRequest {
			t.Fatalf("%d %s, want the handler's 400", r.status, r.body)
		}
		if r := f.post(t, "acct-a", `"ref-1"`, `{}`); r.status != http.StatusBadRequest || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("repeat of a recorded 400: %d %v, want it replayed", r.status, r.header)
		}
		if r := f.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusUnprocessableEntity || r.problemType(t) != oncehttp.ProblemMismatch {
			t.Fatalf("corrected request under a recorded 400: %d %s, want 422", r.status, r.body)
		}
		if got := f.counts(t); got != (counts{}) {
			t.Fatalf("%+v, want nothing done", got)
		}
	})
}

// A 5xx releases the key: the provider failed before doing anything, and a retry of the same
// request runs. The key keeps its request: the first attempt may have done part of the work,
// so a different request under it is refused.
func TestMiddleware_ServerErrorReleasesTheKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	f.app.model.FailNext(1, http.StatusServiceUnavailable)
	if r := f.post(t, "acct-a", `"ref-2"`, q3); r.status != http.StatusBadGateway {
		t.Fatalf("%d %s", r.status, r.body)
	}
	other := `{"source": "q4.csv"}`
	if r := f.post(t, "acct-a", `"ref-2"`, other); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("another request under a released key: %d %s, want 422", r.status, r.body)
	}
	if r := f.post(t, "acct-a", `"ref-2"`, q3); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after a 502: %d %v, want a new run", r.status, r.header)
	}
	if got := f.counts(t); got != (counts{1, 1, 1}) {
		t.Fatalf("%+v, want 1 of each", got)
	}
}

// A handler that refuses a request with a status Unrecorded does not hold (a 409 on a
// condition the client can change) leaves it unrecorded with DontRecord. The negative control
// is the same handler without the call: its 409 is recorded and replayed, and the request
// never runs under that key.
func TestMiddleware_DontRecordLeavesTheKeyUnused(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	for _, dontRecord := range []bool{true, false} {
		t.Run(map[bool]string{true: "DontRecord", false: "negative control"}[dontRecord], func(t *testing.T) {
			t.Parallel()
			var locked atomic.Bool
			var orders atomic.Int64
			mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer, Name: "orders." + strconv.FormatBool(dontRecord)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if locked.Load() {
					if dontRecord && !oncehttp.DontRecord(r) {
						t.Error("DontRecord: the request did not come through the middleware")
					}
					http.Error(w, "the cart is locked while it is being edited", http.StatusConflict)
					return
				}
				orders.Add(1)
				w.WriteHeader(http.StatusCreated)
			})))
			t.Cleanup(srv.Close)
			post := func() response {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"cart": 7}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer acct-a")
				req.Header.Set("Idempotency-Key", `"order-1"`)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				return response{status: resp.StatusCode, header: resp.Header}
			}
			locked.Store(true)
			if r := post(); r.status != http.StatusConflict {
				t.Fatalf("locked: %d, want 409", r.status)
			}
			locked.Store(false)
			r := post()
			switch {
			case dontRecord && (r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" || orders.Load() != 1):
				t.Fatalf("after the lock: %d %v with %d orders, want the order placed", r.status, r.header, orders.Load())
			case !dontRecord && (r.status != http.StatusConflict || r.header.Get("Idempotent-Replayed") != "true" || orders.Load() != 0):
				t.Fatalf("negative control after the lock: %d %v with %d orders, want the 409 replayed", r.status, r.header, orders.Load())
			}
		})
	}
	if oncehttp.DontRecord(httptest.NewRequest(http.MethodPost, "/", nil)) {
		t.Error("DontRecord reported a request that never met the middleware")
	}
}

// The middleware stores its operations as a wrapper oncegen writes for "//once:forever
// scope=account key=reference" passes them: account and key encoded by once.MustKey. So for
// an account holding '/' and '%' (which the encoding escapes) the two meet on one row,
// onceops.Lookup finds it by the encoded pair, and the ledger's scope is the encoded
// account. The negative control is the raw strings: another row.
func TestMiddleware_ScopeAgreesWithGeneratedGuards(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	ctx := context.Background()
	const account, key = "team/a%b", "ref/1%"
	first := f.post(t, account, `"`+key+`"`, q3)
	if first.status != http.StatusCreated {
		t.Fatalf("%d %s", first.status, first.body)
	}
	ran := false
	fn := func(context.Context) (json.RawMessage, error) { ran = true; return nil, nil }
	generated := once.Forever{Name: "reports.generate"}
	rec, out, err := once.ForeverValue(ctx, f.pool, generated, once.Ref{Scope: once.MustKey(account), Key: once.MustKey(key)}, fn)
	if err != nil || ran || out.Status != once.Duplicate || !strings.Contains(string(rec), `"status":201`) {
		t.Fatalf("generated-style call: %s %+v %v (ran: %v), want the middleware's recorded response", rec, out, err, ran)
	}
	looked, err := onceops.Lookup(ctx, f.pool, generated.Name, once.MustKey(account), once.MustKey(key))
	if err != nil || looked.State != "done" || looked.ID != out.Holder {
		t.Fatalf("onceops.Lookup: %+v %v, want operation %s", looked, err, out.Holder)
	}
	var scope string
	if err := f.pool.QueryRow(ctx, `SELECT scope FROM once.ledger`).Scan(&scope); err != nil || scope != once.MustKey(account) {
		t.Fatalf("ledger scope %q (%v), want %q", scope, err, once.MustKey(account))
	}
	if _, out, err := once.ForeverValue(ctx, f.pool, generated, once.Ref{Scope: account, Key: key}, fn); err != nil || !ran || out.Status != once.Ran {
		t.Fatalf("raw strings: %+v %v (ran: %v), want another operation", out, err, ran)
	}
}

func TestNew_RefusesAnUnrecordedStatusOutside4xx(t *testing.T) {
	t.Parallel()
	for _, s := range []int{200, 500, 399} {
		if _, err := oncehttp.New(oncehttp.Config{DB: &pgxpool.Pool{}, Account: bearer, Unrecorded: []int{400, s}}); err == nil {
			t.Errorf("Unrecorded %d accepted", s)
		}
	}
}

// New refuses the names the runtime refuses, by the runtime's own rule: each such name
// would have passed New and then failed every request with a 500. The names it accepts are
// the ones whose requests run and are recorded.
func TestNew_RefusesANameTheRuntimeRefuses(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"api orders v2", true},
		{"commandes-été", true},
		{strings.Repeat("n", once.MaxNameLen), true},
		{"orders\x00", false},
		{"orders\tv2", false},
		{"orders\nv2", false},
		{"orders\x7f", false},
		{"orders\xff", false},
		{strings.Repeat("n", once.MaxNameLen+1), false},
	} {
		_, opErr := once.Forever{Name: c.name}.Do(ctx, pool, once.Ref{Scope: "acct-a", Key: "probe"},
			func(context.Context) error { return nil })
		if (opErr == nil) != c.ok {
			t.Fatalf("name %q: the runtime's guard says %v; the test's expectation is wrong", c.name, opErr)
		}
		mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer, Name: c.name})
		if !c.ok {
			if !errors.Is(err, once.ErrInvalid) || !strings.HasPrefix(err.Error(), "oncehttp: Config.Name: ") {
				t.Errorf("New with name %q: %v, want an ErrInvalid naming Config.Name", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("New with name %q: %v", c.name, err)
		}
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }))
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(q3))
		req.Header.Set("Authorization", "Bearer acct-a")
		req.Header.Set("Idempotency-Key", `"ref-1"`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var recorded int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'done'`, c.name).Scan(&recorded); err != nil {
			t.Fatal(err)
		}
		if rec.Code != http.StatusCreated || recorded != 2 {
			t.Errorf("name %q: %d %s with %d operations done, want 201 and 2 (the probe's and the request's)", c.name, rec.Code, rec.Body, recorded)
		}
	}
}

func TestNew_RefusesAConfigWithoutDBOrAccount(t *testing.T) {
	t.Parallel()
	if _, err := oncehttp.New(oncehttp.Config{Account: bearer}); err == nil {
		t.Error("no DB accepted")
	}
	if _, err := oncehttp.New(oncehttp.Config{DB: &pgxpool.Pool{}}); err == nil {
		t.Error("no Account accepted")
	}
	if _, err := oncehttp.New(oncehttp.Config{DB: &pgxpool.Pool{}, Account: bearer, Wait: -1}); err == nil {
		t.Error("negative Wait accepted")
	}
}

func TestMiddleware_DatabaseErrorIs500AndLogged(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	pool.Close()
	var logged strings.Builder
	mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }))
	req := httptest.NewRequest(http.MethodPost, "/reports", strings.NewReader(q3))
	req.Header.Set("Authorization", "Bearer acct-a")
	req.Header.Set("Idempotency-Key", `"ref-1"`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if r.status != http.StatusInternalServerError || r.problemType(t) != oncehttp.ProblemInternal || ran {
		t.Fatalf("%d %s (handler ran: %v), want 500 without running the handler", r.status, r.body, ran)
	}
	if !strings.Contains(logged.String(), `level=ERROR`) || !strings.Contains(logged.String(), `key=ref-1 account=acct-a`) {
		t.Fatalf("log %q does not name the request", logged.String())
	}
}

// failingBody is a request body whose client stops sending it half-way.
type failingBody struct{ sent bool }

func (b *failingBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, errors.New("client went away")
	}
	b.sent = true
	return copy(p, `{"source": "q3`), nil
}

// A body that cannot be read to its end is no request to fingerprint: 400, saying so, and
// nothing is written.
func TestMiddleware_UnreadableBodyIs400(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }))
	req := httptest.NewRequest(http.MethodPost, "/reports", &failingBody{})
	req.Header.Set("Authorization", "Bearer acct-a")
	req.Header.Set("Idempotency-Key", `"ref-1"`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if r.status != http.StatusBadRequest || r.problemType(t) != oncehttp.ProblemBodyUnreadable || ran {
		t.Fatalf("%d %s (handler ran: %v), want 400 %s", r.status, r.body, ran, oncehttp.ProblemBodyUnreadable)
	}
	var ops int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM once.operations`).Scan(&ops); err != nil || ops != 0 {
		t.Fatalf("%d operations (%v), want none", ops, err)
	}
}

// A bare key (Idempotency-Key: ref-1, as Stripe's clients send it) is accepted by default and
// is the same key as its quoted form; StrictKeys refuses it.
func TestMiddleware_BareKeysByDefaultStrictOnRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	first := f.post(t, "acct-a", "ref-1", q3)
	again := f.post(t, "acct-a", `"ref-1"`, q3)
	if first.status != http.StatusCreated || again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("bare then quoted: %d, %d (replayed %q); want 201 and its replay", first.status, again.status, again.header.Get("Idempotent-Replayed"))
	}
	strict := newFixture(t, fixtureOptions{configure: func(c *oncehttp.Config) { c.StrictKeys = true }})
	if r := strict.post(t, "acct-a", "ref-1", q3); r.status != http.StatusBadRequest || r.problemType(t) != oncehttp.ProblemKeyMalformed {
		t.Fatalf("strict, bare key: %d %s, want 400", r.status, r.body)
	}
	if r := strict.post(t, "acct-a", `"ref-1"`, q3); r.status != http.StatusCreated {
		t.Fatalf("strict, quoted key: %d %s, want 201", r.status, r.body)
	}
}
