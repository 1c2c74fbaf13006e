package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// jobView is a job as the API shows it.
type jobView struct {
	ID         int64  `json:"id"`
	State      string `json:"state"`
	Submission int64  `json:"submission"`
	Reference  string `json:"reference"`
	Replaces   int64  `json:"replaces,omitempty"`
	Report     int64  `json:"report,omitempty"`
	Error      string `json:"error,omitempty"`
}

func (app *App) handleSubmit(w http.ResponseWriter, r *http.Request) {
	acct, ok := app.requireAccount(w, r)
	if !ok {
		return
	}
	in := input[submission](r)
	// The front door runs this once per Idempotency-Key, so a double click makes one
	// submission.
	var id int64
	err := app.db.QueryRow(r.Context(), `INSERT INTO submissions (account_id, title, body) VALUES ($1, $2, $3) RETURNING id`,
		acct.ID, in.Title, in.Body).Scan(&id)
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/submissions/%d", id))
	writeJSON(w, http.StatusCreated, map[string]int64{"id": id})
}

func (app *App) handleGenerate(w http.ResponseWriter, r *http.Request) {
	acct, id, in, ok := app.reportRequest(w, r)
	if !ok {
		return
	}
	sub, ok := app.owned(w, r, "submission", `SELECT id FROM submissions WHERE id = $1 AND account_id = $2`, id, acct)
	if ok {
		app.queue(w, r, Job{Account: acct.ID, Submission: sub, Input: in})
	}
}

// handleRegenerate queues a new report on a report's submission. It is a new intention, so
// the client sends a new Idempotency-Key: the one that made the report, sent here, names
// another request and is refused (422) by the front door.
func (app *App) handleRegenerate(w http.ResponseWriter, r *http.Request) {
	acct, report, in, ok := app.reportRequest(w, r)
	if !ok {
		return
	}
	sub, ok := app.owned(w, r, "report", `SELECT submission_id FROM reports WHERE id = $1 AND account_id = $2`, report, acct)
	if ok {
		app.queue(w, r, Job{Account: acct.ID, Submission: sub, Input: in, Replaces: report})
	}
}

// reportRequest reads what both report requests carry: the account, the id in the path and
// what the report must be (checked by validated before the front door). When the account
// is missing, it has answered the request.
func (app *App) reportRequest(w http.ResponseWriter, r *http.Request) (acct Account, id int64, in ReportInput, ok bool) {
	if acct, ok = app.requireAccount(w, r); !ok {
		return
	}
	id, _ = strconv.ParseInt(r.PathValue("id"), 10, 64)
	return acct, id, input[ReportInput](r), true
}

// owned runs query (a select of one id, given an id and an account) and returns its
// result; a row of another account is as absent as no row, and answered 404.
func (app *App) owned(w http.ResponseWriter, r *http.Request, what, query string, id int64, acct Account) (int64, bool) {
	var found int64
	err := app.db.QueryRow(r.Context(), query, id, acct.ID).Scan(&found)
	if errors.Is(err, pgx.ErrNoRows) {
		writeProblem(w, http.StatusNotFound, "No such "+what, "")
		return 0, false
	}
	if err != nil {
		app.serverError(w, err)
		return 0, false
	}
	return found, true
}

// queue records job under the request's operation and answers 202 with it. The answer is
// what the front door records and replays to every retry of the same reference.
func (app *App) queue(w http.ResponseWriter, r *http.Request, job Job) {
	op, ok := once.AttemptFrom(r.Context())
	if !ok {
		app.serverError(w, errors.New("a report request reached its handler without the front door's operation"))
		return
	}
	job.Operation, job.Reference = op.ID(), op.Key()
	id, err := app.enqueue(r.Context(), job)
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/jobs/%d", id))
	writeJSON(w, http.StatusAccepted, jobView{ID: id, State: "queued", Submission: job.Submission, Reference: job.Reference, Replaces: job.Replaces})
}

func (app *App) handleJob(w http.ResponseWriter, r *http.Request) {
	acct, ok := app.requireAccount(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	v := jobView{ID: id}
	var why *string
	err := app.db.QueryRow(r.Context(), `SELECT state, submission_id, reference, coalesce(replaces, 0), coalesce(report_id, 0), error
FROM report_jobs WHERE id = $1 AND account_id = $2`, id, acct.ID).Scan(&v.State, &v.Submission, &v.Reference, &v.Replaces, &v.Report, &why)
	if errors.Is(err, pgx.ErrNoRows) {
		// Another account's job is as absent as a job that never was.
		writeProblem(w, http.StatusNotFound, "No such job", "")
		return
	}
	if err != nil {
		app.serverError(w, err)
		return
	}
	if why != nil && v.State != "queued" {
		v.Error = *why
	}
	if v.Report != 0 {
		w.Header().Set("Content-Location", fmt.Sprintf("/reports/%d", v.Report))
	}
	writeJSON(w, http.StatusOK, v)
}

func (app *App) handleReport(w http.ResponseWriter, r *http.Request) {
	acct, ok := app.requireAccount(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	rep := Report{ID: id}
	err := app.db.QueryRow(r.Context(), `SELECT job_id, submission_id, coalesce(replaces, 0), body, model_call
FROM reports WHERE id = $1 AND account_id = $2`, id, acct.ID).Scan(&rep.Job, &rep.Submission, &rep.Replaces, &rep.Body, &rep.ModelCall)
	if errors.Is(err, pgx.ErrNoRows) {
		writeProblem(w, http.StatusNotFound, "No such report", "")
		return
	}
	if err != nil {
		app.serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// Usage is what an account has used: reports made and tokens they cost, from once's ledger.
type Usage struct {
	// Reports counts the reports made (ledger kind LedgerUsage).
	Reports int64 `json:"reports"`
	// Tokens sums the tokens their model calls consumed (ledger kind LedgerCost).
	Tokens int64 `json:"tokens"`
}

func (app *App) handleUsage(w http.ResponseWriter, r *http.Request) {
	acct, ok := app.requireAccount(w, r)
	if !ok {
		return
	}
	scope, err := once.Key(acct.ID) // as GenerateReportOnce scopes its operations
	if err != nil {
		app.serverError(w, err)
		return
	}
	var u Usage
	err = app.db.QueryRow(r.Context(), `SELECT coalesce(sum(quantity) FILTER (WHERE kind = $3), 0)::bigint,
	coalesce(sum(quantity) FILTER (WHERE kind = $4), 0)::bigint
FROM once.ledger WHERE operation = $1 AND scope = $2`, generateGuard, scope, LedgerUsage, LedgerCost).Scan(&u.Reports, &u.Tokens)
	if err != nil {
		app.serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

func (app *App) requireAccount(w http.ResponseWriter, r *http.Request) (Account, bool) {
	acct, err := app.account(r)
	if errors.Is(err, errUnauthenticated) {
		writeProblem(w, http.StatusUnauthorized, "Unauthenticated", err.Error())
		return Account{}, false
	}
	if err != nil {
		app.serverError(w, err)
		return Account{}, false
	}
	return acct, true
}

func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeProblem(w, http.StatusNotFound, "Not found", "")
		return 0, false
	}
	return id, true
}

// serverError answers 500, which the front door does not record: the request did not
// happen, and a retry runs it again.
func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("reports: %v", err)
	writeProblem(w, http.StatusInternalServerError, "Internal error", "")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the status is sent; a client that left cannot be told
}

func writeProblem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": title, "status": status, "detail": detail})
}
