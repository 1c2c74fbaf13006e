// Package naive is the reports app as it is first written, before anyone counted what a
// second click costs: the same API and worker as package reports, with none of its
// promises. Its tests show each duplicate happening, and oncelint reports each cause.
//
//   - The request checks whether a job with the reference exists, then inserts one: two
//     requests that check before either inserts make two jobs (check-then-insert). The
//     check is not scoped to the account either, so another account's retry is answered
//     with this account's job, and a reuse with other input gets the old job silently.
//   - The worker keeps the jobs it is running in a set in memory: a second worker process
//     never saw it, so two workers carry out the same job.
//   - The model is called with no idempotency key: a call whose answer was lost is made
//     (and billed) again on the retry.
//   - The report, its usage row and the owner's email are one transaction, held open while
//     the email is sent: a failing email service rolls the report back, and the retry
//     pays the model again. The email's idempotency key is made from the clock, so it
//     protects nothing.
package naive

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schema string

// Migrate creates the app's tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("naive: migrating: %w", err)
	}
	return nil
}

// Server is one replica of the app: its API and its worker.
type Server struct {
	db       *pgxpool.Pool
	modelURL string
	mailURL  string

	mu      sync.Mutex
	running map[int64]bool // the jobs this process is carrying out

	// AfterCheck, when set, runs after a request has looked for its job and before it
	// inserts one; AfterPick after a worker has taken a job and before it calls the model.
	// Tests hold requests and workers there, to make the race they already have happen
	// every time instead of now and then.
	AfterCheck, AfterPick func()
}

// New returns a replica that calls the model and the email service at the given base URLs.
func New(db *pgxpool.Pool, modelURL, mailURL string) *Server {
	return &Server{db: db, modelURL: modelURL, mailURL: mailURL, running: map[int64]bool{}}
}

// Handler is the same API as the reports app's POST /submissions/{id}/reports and
// GET /jobs/{id}.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /submissions/{id}/reports", s.handleGenerate)
	mux.HandleFunc("GET /jobs/{id}", s.handleJob)
	return mux
}

func (s *Server) account(r *http.Request) (string, bool) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var id string
	err := s.db.QueryRow(r.Context(), `SELECT id FROM accounts WHERE token = $1`, token).Scan(&id)
	return id, err == nil
}

type jobView struct {
	ID         int64  `json:"id"`
	State      string `json:"state"`
	Submission int64  `json:"submission"`
	Reference  string `json:"reference"`
}

func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request) {
	acct, ok := s.account(r)
	if !ok {
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	sub, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	input, err := io.ReadAll(r.Body)
	if err != nil || !json.Valid(input) {
		http.Error(w, "bad input", http.StatusBadRequest)
		return
	}
	ref := r.Header.Get("Idempotency-Key")
	ctx := r.Context()

	// Has this been asked for already? Then answer with that job.
	v := jobView{Reference: ref}
	err = s.db.QueryRow(ctx, `SELECT id, state, submission_id FROM report_jobs WHERE reference = $1`, ref).Scan(&v.ID, &v.State, &v.Submission)
	if err == nil {
		writeJSON(w, http.StatusAccepted, v)
		return
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if s.AfterCheck != nil {
		s.AfterCheck()
	}
	err = s.db.QueryRow(ctx, `INSERT INTO report_jobs (account_id, submission_id, reference, input) VALUES ($1, $2, $3, $4) RETURNING id`, // ONCE005: nothing stops two requests that both found nothing
		acct, sub, ref, string(input)).Scan(&v.ID)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	v.State, v.Submission = "queued", sub
	writeJSON(w, http.StatusAccepted, v)
}

func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	acct, ok := s.account(r)
	if !ok {
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	v := jobView{}
	err := s.db.QueryRow(r.Context(), `SELECT id, state, submission_id, reference FROM report_jobs WHERE id = $1 AND account_id = $2`,
		r.PathValue("id"), acct).Scan(&v.ID, &v.State, &v.Submission, &v.Reference)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type job struct {
	id, submission int64
	account        string
	input          []byte
}

// Work is one pass of the worker: it carries out every queued job.
func (s *Server) Work(ctx context.Context) error {
	rows, err := s.db.Query(ctx, `SELECT id, account_id, submission_id, input FROM report_jobs WHERE state = 'queued' ORDER BY id`)
	if err != nil {
		return err
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (job, error) {
		var j job
		return j, row.Scan(&j.id, &j.account, &j.submission, &j.input)
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range jobs {
		if err := s.runJob(ctx, j); err != nil {
			errs = append(errs, fmt.Errorf("job %d: %w", j.id, err))
		}
	}
	return errors.Join(errs...)
}

// runJob writes a job's report, unless this process is writing it already.
func (s *Server) runJob(ctx context.Context, j job) error {
	s.mu.Lock()
	if s.running[j.id] { // ONCE003: a second worker process has a set of its own
		s.mu.Unlock()
		return nil
	}
	s.running[j.id] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, j.id)
		s.mu.Unlock()
	}()
	if s.AfterPick != nil {
		s.AfterPick()
	}

	var title string
	if err := s.db.QueryRow(ctx, `SELECT title FROM submissions WHERE id = $1`, j.submission).Scan(&title); err != nil {
		return err
	}
	call, err := s.askModel(fmt.Sprintf("Write a report on %q: %s", title, j.input))
	if err != nil {
		return err // the job stays queued, and the next pass asks the model again
	}

	tx, err := s.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var report int64
	if err := tx.QueryRow(ctx, `INSERT INTO reports (account_id, job_id, body, model_call) VALUES ($1, $2, $3, $4) RETURNING id`,
		j.account, j.id, "A report on "+title, call).Scan(&report); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO usage (account_id, report_id, units) VALUES ($1, $2, 1)`, j.account, report); err != nil {
		return err
	}
	if err := s.emailOwner(ctx, j.account, report); err != nil {
		return err // rolls the report back; the model was paid all the same
	}
	if _, err := tx.Exec(ctx, `UPDATE report_jobs SET state = 'done' WHERE id = $1`, j.id); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// askModel has the model write a report and returns the call's id.
func (s *Server) askModel(prompt string) (string, error) {
	body, _ := json.Marshal(map[string]any{"model": "report-writer-1", "input": prompt})
	resp, err := http.Post(s.modelURL+"/v1/responses", "application/json", bytes.NewReader(body)) // ONCE001: nothing names the call, so a retry is a second bill
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var call struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&call); err != nil || call.ID == "" {
		return "", fmt.Errorf("the model's answer: %d %v", resp.StatusCode, err)
	}
	return call.ID, nil
}

func (s *Server) emailOwner(ctx context.Context, account string, report int64) error {
	body, _ := json.Marshal(map[string]any{"to": account, "subject": fmt.Sprintf("Your report %d is ready", report)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.mailURL+"/v1/emails", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("report-email-%d", time.Now().UnixNano())) // ONCE002: a new key on every attempt
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("email service answered %d", resp.StatusCode)
	}
	return nil
}
