package reports_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/reports"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/runtime/oncehttp"
)

// The tests below are the story's own: the same operation reference concurrently from two
// clients, after completion, with changed input, from another account, interrupted after
// the provider accepted, and retried near the end of the retention window. Each counts the
// lasting effects (jobs, reports, usage rows in the ledger, model calls and emails the
// providers performed), not HTTP answers.

var input = map[string]any{"tone": "formal", "sections": []string{"revenue", "risks"}}

func reportsPath(sub int64) string { return fmt.Sprintf("/submissions/%d/reports", sub) }

func TestStory_SameReferenceFromManyClientsAtOnceMakesOneReport(t *testing.T) {
	t.Parallel()
	// Two replicas of the app, as in production: a second tab or a retrying phone may reach
	// either. The model takes 50ms, so the workers' calls overlap.
	w := setup(t, options{replicas: 2, conns: 48, modelOpts: []fakeprovider.Option{fakeprovider.WithLatency(50 * time.Millisecond)}})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")

	const clients = 32
	replies := make([]reply, clients)
	errs := make([]error, clients)
	storm.Run(clients, func(i int) {
		replies[i], errs[i] = w.try(i%2, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	})
	jobs := map[int64]bool{}
	inFlight := 0
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		switch r.status {
		case http.StatusAccepted:
			jobs[r.job(t).ID] = true
		case http.StatusConflict:
			if !strings.Contains(string(r.body), oncehttp.ProblemInFlight) {
				t.Fatalf("client %d: 409 %s, want the in-flight problem", i, r.body)
			}
			inFlight++
		default:
			t.Fatalf("client %d: %d %s, want 202 or 409", i, r.status, r.body)
		}
	}
	if len(jobs) != 1 {
		t.Fatalf("%d clients were answered with jobs %v, want one job for all", clients, jobs)
	}
	t.Logf("%d clients: %d answered 202 with the one job, %d told it was in flight", clients, clients-inFlight, inFlight)
	w.want("after the clients' storm", effects{Jobs: 1})

	// Eight workers pick the job up at once; the job's promise lets one of them do it.
	const workers = 8
	storm.Run(workers, func(i int) { _, errs[i] = w.replicas[i%2].Work(context.Background()) })
	for _, err := range errs[:workers] {
		if err != nil {
			t.Fatal(err)
		}
	}
	w.work() // delivers an email a pass may have found not yet enqueued
	w.want("after the workers' storm", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})
}

func TestStory_SameReferenceAfterCompletionGetsTheRecordedAnswer(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	first := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	j := first.job(t)
	if res := w.work(); res.Done != 1 || res.Emails.Delivered != 1 {
		t.Fatalf("worker pass: %+v, want one job done and one email delivered", res)
	}

	again := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	if again.status != http.StatusAccepted || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("retry after completion: %d %v %s, want the first answer replayed", again.status, again.header, again.body)
	}
	if res := w.work(); res != (reports.WorkResult{}) {
		t.Fatalf("worker pass after the retry: %+v, want nothing to do", res)
	}
	w.want("after the retry", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})

	// The answer leads to a coherent result: the job is done and names its report.
	var done jobView
	w.do(0, "GET", first.header.Get("Location"), "acme-token", "", nil).json(t, &done)
	if done.ID != j.ID || done.State != "done" || done.Report == 0 {
		t.Fatalf("job after completion: %+v", done)
	}
	var rep struct {
		ID        int64
		Job       int64
		Body      string
		ModelCall string `json:"model_call"`
	}
	w.do(0, "GET", fmt.Sprintf("/reports/%d", done.Report), "acme-token", "", nil).json(t, &rep)
	if rep.ID != done.Report || rep.Job != j.ID || !strings.Contains(rep.Body, rep.ModelCall) || !strings.Contains(rep.Body, "formal") {
		t.Fatalf("report: %+v", rep)
	}
	var use struct{ Reports, Tokens int64 }
	w.do(0, "GET", "/usage", "acme-token", "", nil).json(t, &use)
	if use.Reports != 1 || use.Tokens <= 0 {
		t.Fatalf("usage: %+v, want one report and its tokens", use)
	}
}

func TestStory_SameReferenceWithChangedInputIsRefused(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)

	for _, changed := range []any{
		map[string]any{"tone": "plain", "sections": []string{"revenue", "risks"}},
		map[string]any{"tone": "formal", "sections": []string{"revenue", "outlook"}}, // a nested field
		map[string]any{"tone": "formal"},
	} {
		r := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", changed)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), oncehttp.ProblemMismatch) {
			t.Fatalf("reference reused with %v: %d %s, want 422", changed, r.status, r.body)
		}
	}
	// The same request spelled differently (keys in another order) is the same request.
	same := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", map[string]any{"sections": []string{"revenue", "risks"}, "tone": "formal"})
	if same.status != http.StatusAccepted || same.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("same input, keys reordered: %d %s, want the replay", same.status, same.body)
	}
	w.work()
	w.want("after the refused reuses", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})
}

func TestStory_SameReferenceFromAnotherAccountIsAnotherOperation(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	acmeSub := w.submit("acme-token", "submit", "Acme Q3")
	globexSub := w.submit("globex-token", "submit", "Globex Q3")

	a := w.do(0, "POST", reportsPath(acmeSub), "acme-token", "weekly", input)
	g := w.do(0, "POST", reportsPath(globexSub), "globex-token", "weekly", input)
	aj, gj := a.job(t), g.job(t)
	if aj.ID == gj.ID || a.header.Get("Idempotent-Replayed") != "" || g.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the same reference from two accounts: %s and %s, want two new jobs", a.body, g.body)
	}
	// Another account cannot queue work on a submission it does not own.
	if r := w.do(0, "POST", reportsPath(acmeSub), "globex-token", "weekly-acme", input); r.status != http.StatusNotFound {
		t.Fatalf("globex on acme's submission: %d %s, want 404", r.status, r.body)
	}
	w.work()
	w.want("two accounts, one reference each", effects{Jobs: 2, Reports: 2, Usage: 2, ModelCalls: 2, Emails: 2})

	// Neither can discover the other's job or report.
	var done jobView
	w.do(0, "GET", fmt.Sprintf("/jobs/%d", aj.ID), "acme-token", "", nil).json(t, &done)
	for _, path := range []string{fmt.Sprintf("/jobs/%d", aj.ID), fmt.Sprintf("/reports/%d", done.Report)} {
		if r := w.do(0, "GET", path, "globex-token", "", nil); r.status != http.StatusNotFound {
			t.Fatalf("globex GET %s: %d %s, want 404", path, r.status, r.body)
		}
	}
	for _, token := range []string{"acme-token", "globex-token"} {
		var use struct{ Reports int64 }
		w.do(0, "GET", "/usage", token, "", nil).json(t, &use)
		if use.Reports != 1 {
			t.Fatalf("%s usage: %+v, want one report each", token, use)
		}
	}
}

func TestStory_InterruptedAfterTheModelAcceptedThenRetriedBillsOnce(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	j := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)

	// The model runs (and bills) the call, then the connection drops before its answer.
	w.model.DropAfterAccept(1)
	if res := w.work(); res.Retry != 1 {
		t.Fatalf("worker pass with the answer lost: %+v, want the job left for a retry", res)
	}
	w.want("after the lost answer", effects{Jobs: 1, ModelCalls: 1})

	// The client retries too: it gets its answer, and no second job.
	if r := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input); r.job(t).ID != j.ID {
		t.Fatalf("client retry: %s, want job %d", r.body, j.ID)
	}
	// The worker's retry sends the same provider key: the model answers with the call it
	// already made.
	if res := w.work(); res.Done != 1 {
		t.Fatalf("worker retry: %+v, want the job done", res)
	}
	w.want("after the retry", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})
	if w.model.Replays() != 1 {
		t.Fatalf("model replays = %d, want the retry answered from the first call", w.model.Replays())
	}
	var attempts int
	var state string
	if err := w.pool.QueryRow(context.Background(), `SELECT state, attempts FROM once.operations WHERE name = 'reports.generate'`).Scan(&state, &attempts); err != nil {
		t.Fatal(err)
	}
	if state != "done" || attempts != 2 {
		t.Fatalf("the job's operation: %s after %d attempts, want done after 2", state, attempts)
	}
}

func TestStory_InterruptedWithAModelThatCannotDedupeWaitsForAnOperator(t *testing.T) {
	t.Parallel()
	w := setup(t, options{modelOpts: []fakeprovider.Option{fakeprovider.WithoutIdempotency()}, modelNoDedupe: true})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	j := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)

	w.model.DropAfterAccept(1)
	if res := w.work(); res.Uncertain != 1 {
		t.Fatalf("worker pass with the answer lost: %+v, want the job uncertain", res)
	}
	// Nobody knows whether the model ran; asking it again might bill twice, so nothing does.
	w.work()
	w.work()
	w.want("while uncertain", effects{Jobs: 1, ModelCalls: 1})
	var v jobView
	w.do(0, "GET", fmt.Sprintf("/jobs/%d", j.ID), "acme-token", "", nil).json(t, &v)
	if v.State != "uncertain" || !strings.Contains(v.Error, "may have run") {
		t.Fatalf("job while uncertain: %+v", v)
	}
	ctx := context.Background()
	listed, err := w.replicas[0].Uncertain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Key != fmt.Sprint(j.ID) || listed[0].Scope != "acme" {
		t.Fatalf("uncertain operations: %+v, want the job's", listed)
	}

	// The operator checks the provider's records and decides to run it again, accepting
	// the cost of a second call.
	if err := w.replicas[0].RetryUncertain(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if res := w.work(); res.Done != 1 {
		t.Fatalf("worker pass after the operator's decision: %+v", res)
	}
	w.want("after the operator's retry", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 2, Emails: 1})
	if listed, err := w.replicas[0].Uncertain(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("uncertain operations after the retry: %+v, %v", listed, err)
	}
}

func TestStory_RetryNearTheEndOfTheRetentionWindow(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	first := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	j := first.job(t)
	w.work()

	// A minute before the day is out, the reference is still remembered.
	w.age("acme", "generate-q3", 24*time.Hour-time.Minute)
	inside := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	if inside.job(t).ID != j.ID || inside.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry inside the window: %s, want job %d replayed", inside.body, j.ID)
	}
	w.work()
	w.want("after a retry inside the window", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})

	// A minute after, it is forgotten: the same reference is new work.
	w.age("acme", "generate-q3", 2*time.Minute)
	after := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input)
	if after.job(t).ID == j.ID || after.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the window: %s, want a new job", after.body)
	}
	w.work()
	w.want("after a retry past the window", effects{Jobs: 2, Reports: 2, Usage: 2, ModelCalls: 2, Emails: 2})
}

func TestStory_AFailingEmailIsRetriedAloneAndTheReportIsNotMadeAgain(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)

	w.mail.FailNext(1, http.StatusServiceUnavailable)
	if res := w.work(); res.Done != 1 || res.Emails.Failed != 1 {
		t.Fatalf("pass with the email service down: %+v", res)
	}
	w.want("with the email failed", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1})
	if res := w.work(); res.Emails.Delivered != 1 || res.Done != 0 {
		t.Fatalf("next pass: %+v, want only the email delivered", res)
	}
	w.want("after the email's retry", effects{Jobs: 1, Reports: 1, Usage: 1, ModelCalls: 1, Emails: 1})
}

func TestStory_AModelRefusalFailsTheJobForGoodAndDeductsNothing(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	j := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)

	// The model refuses the request (400): asking again would be refused again.
	w.model.FailNext(1, http.StatusBadRequest)
	if res := w.work(); res.Failed != 1 {
		t.Fatalf("pass with the model refusing: %+v, want the job failed", res)
	}
	if res := w.work(); res != (reports.WorkResult{}) {
		t.Fatalf("next pass: %+v, want nothing to do", res)
	}
	w.want("after the refusal", effects{Jobs: 1})
	if n := w.model.Requests(); n != 1 {
		t.Fatalf("the model was asked %d times, want once: a refusal is not retried", n)
	}
	var v jobView
	w.do(0, "GET", fmt.Sprintf("/jobs/%d", j.ID), "acme-token", "", nil).json(t, &v)
	if v.State != "failed" || !strings.Contains(v.Error, "400") {
		t.Fatalf("job after the refusal: %+v", v)
	}
}

func TestStory_RegenerateIsANewOperationOnPurpose(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	made := w.do(0, "POST", reportsPath(sub), "acme-token", "generate-q3", input).job(t)
	w.work()
	var first jobView
	w.do(0, "GET", fmt.Sprintf("/jobs/%d", made.ID), "acme-token", "", nil).json(t, &first)

	regen := fmt.Sprintf("/reports/%d/regenerate", first.Report)
	// The reference of the first report names that request: reused here, it is refused.
	if r := w.do(0, "POST", regen, "acme-token", "generate-q3", input); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("regenerate with the first reference: %d %s, want 422", r.status, r.body)
	}
	j := w.do(0, "POST", regen, "acme-token", "regenerate-q3-1", input).job(t)
	if again := w.do(0, "POST", regen, "acme-token", "regenerate-q3-1", input); again.job(t).ID != j.ID {
		t.Fatalf("regenerate retried: %s, want job %d", again.body, j.ID)
	}
	w.work()
	w.want("after one deliberate regenerate", effects{Jobs: 2, Reports: 2, Usage: 2, ModelCalls: 2, Emails: 2})
	var second jobView
	w.do(0, "GET", fmt.Sprintf("/jobs/%d", j.ID), "acme-token", "", nil).json(t, &second)
	if second.Replaces != first.Report || second.Report == first.Report || second.State != "done" {
		t.Fatalf("regenerated job: %+v, want a new report replacing %d", second, first.Report)
	}
}

func TestStory_BadRequestsWriteNothing(t *testing.T) {
	t.Parallel()
	w := setup(t, options{})
	sub := w.submit("acme-token", "submit-q3", "Q3 review")
	for _, c := range []struct {
		token, key string
		body       any
		status     int
	}{
		{"acme-token", "", input, http.StatusBadRequest},                                           // no Idempotency-Key
		{"", "generate-q3", input, http.StatusUnauthorized},                                        // no account
		{"forged-token", "generate-q3", input, http.StatusUnauthorized},                            // no such account
		{"acme-token", "generate-bad", map[string]any{"tone": "shouty"}, http.StatusBadRequest},    // bad input
		{"acme-token", "generate-odd", map[string]any{"account": "globex"}, http.StatusBadRequest}, // the account is not the body's to say
		{"acme-token", "generate-odd", "not an object", http.StatusBadRequest},
	} {
		if r := w.do(0, "POST", reportsPath(sub), c.token, c.key, c.body); r.status != c.status {
			t.Fatalf("token %q key %q body %v: %d %s, want %d", c.token, c.key, c.body, r.status, r.body, c.status)
		}
	}
	w.work()
	w.want("after bad requests", effects{})
	// Not even their answers are recorded: the same keys, sent with good requests, work.
	var ops int
	if err := w.pool.QueryRow(context.Background(), `SELECT count(*) FROM once.operations WHERE name = 'reports.api' AND key <> 'submit-q3'`).Scan(&ops); err != nil || ops != 0 {
		t.Fatalf("front-door operations recorded for bad requests: %d, %v", ops, err)
	}
	w.do(0, "POST", reportsPath(sub), "acme-token", "generate-bad", input).job(t)
}

// age moves an operation of the front door back in time by d: its claim, settlement and
// expiry. Expiry is judged by the database's clock, so this is how a test lets a day pass.
func (w *world) age(account, key string, d time.Duration) {
	w.t.Helper()
	tag, err := w.pool.Exec(context.Background(), `UPDATE once.operations
SET claimed_at = claimed_at - $3::bigint * interval '1 microsecond', alive_at = alive_at - $3::bigint * interval '1 microsecond',
	settled_at = settled_at - $3::bigint * interval '1 microsecond', expires_at = expires_at - $3::bigint * interval '1 microsecond'
WHERE name = 'reports.api' AND scope = $1 AND key = $2`, account, key, d.Microseconds())
	if err != nil || tag.RowsAffected() != 1 {
		w.t.Fatalf("ageing operation %s/%s: %v (%d rows)", account, key, err, tag.RowsAffected())
	}
}
