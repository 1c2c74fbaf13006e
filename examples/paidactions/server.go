package paidactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	once "github.com/oncekit/once/runtime"
)

// AccountHeader carries the caller's account. It stands in for authentication: in a real
// deployment the account comes from the session, never from anything the client chooses.
const AccountHeader = "X-Account"

// Server is the editor's HTTP API:
//
//	POST /jobs                         {"title"}                          -> 201 {"job_id", "candidate_id"}
//	POST /jobs/{job}/render-inputs     RenderInputs                       -> 201 {"job_id", "version"}
//	POST /jobs/{job}/actions           {"action", "candidate_id",
//	                                    "render_inputs_version", "instruction"}
//	                                   -> 202 Transaction (claimed, or a duplicate still in flight)
//	                                   -> 200 Transaction (a duplicate of a settled action)
//	GET  /transactions/{id}            -> 200 Transaction
//	GET  /ledger                       -> 200 [Spend]
//
// Errors answer {"error": "..."}: 400 for a malformed request, 401 without an account,
// 404 for another account's job, 422 for render inputs that lost their voice or product
// lock. A refused request writes nothing.
type Server struct {
	db  once.DB
	mux *http.ServeMux
}

// NewServer returns the API over db.
func NewServer(db once.DB) *Server {
	s := &Server{db: db, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /jobs", s.createJob)
	s.mux.HandleFunc("POST /jobs/{job}/render-inputs", s.saveRenderInputs)
	s.mux.HandleFunc("POST /jobs/{job}/actions", s.claimAction)
	s.mux.HandleFunc("GET /transactions/{id}", s.transaction)
	s.mux.HandleFunc("GET /ledger", s.ledger)
	return s
}

// ServeHTTP routes the request, after checking it names an account.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(AccountHeader) == "" {
		writeError(w, http.StatusUnauthorized, fmt.Errorf("missing %s header", AccountHeader))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title string `json:"title"`
	}
	if !readJSON(w, r, &in) {
		return
	}
	if in.Title == "" {
		writeError(w, http.StatusBadRequest, errors.New("title is required"))
		return
	}
	job, candidate, err := CreateJob(r.Context(), s.db, r.Header.Get(AccountHeader), in.Title)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int64{"job_id": job, "candidate_id": candidate})
}

func (s *Server) saveRenderInputs(w http.ResponseWriter, r *http.Request) {
	job, ok := pathJob(w, r)
	if !ok {
		return
	}
	var in RenderInputs
	if !readJSON(w, r, &in) {
		return
	}
	if err := checkRenderInputs(in); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := checkJob(r.Context(), s.db, r.Header.Get(AccountHeader), job); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	version, _, err := SaveRenderInputsOnce(r.Context(), s.db, job, in)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int64{"job_id": job, "version": int64(version)})
}

// actionRequest is the body of a paid-action click. ClickedAt and Tab are what a browser
// sends along; they are not part of the action, so they do not change its key.
type actionRequest struct {
	PaidAction
	ClickedAt string `json:"clicked_at,omitempty"`
	Tab       string `json:"tab,omitempty"`
}

func (s *Server) claimAction(w http.ResponseWriter, r *http.Request) {
	job, ok := pathJob(w, r)
	if !ok {
		return
	}
	var in actionRequest
	if !readJSON(w, r, &in) {
		return
	}
	if in.JobID != 0 && in.JobID != job {
		writeError(w, http.StatusBadRequest, fmt.Errorf("job_id %d in the body is not the job %d of the path", in.JobID, job))
		return
	}
	in.JobID = job
	t, claimed, err := Claim(r.Context(), s.db, r.Header.Get(AccountHeader), in.PaidAction)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	status := http.StatusAccepted
	if !claimed && t.Status.Settled() {
		status = http.StatusOK
	}
	w.Header().Set("Location", "/transactions/"+t.ID)
	writeJSON(w, status, struct {
		Transaction
		Duplicate bool `json:"duplicate"`
	}{t, !claimed})
}

func (s *Server) transaction(w http.ResponseWriter, r *http.Request) {
	t, err := LookupTransaction(r.Context(), s.db, r.Header.Get(AccountHeader), r.PathValue("id"))
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) ledger(w http.ResponseWriter, r *http.Request) {
	spends, err := Ledger(r.Context(), s.db, r.Header.Get(AccountHeader))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if spends == nil {
		spends = []Spend{}
	}
	writeJSON(w, http.StatusOK, spends)
}

// CreateJob creates a job for account with its starter draft candidate, and returns both
// ids. Creating a job spends nothing.
func CreateJob(ctx context.Context, db once.DB, account, title string) (job, candidate int64, err error) {
	err = db.QueryRow(ctx, `WITH j AS (INSERT INTO jobs (account_id, title) VALUES ($1, $2) RETURNING id)
INSERT INTO candidates (job_id, kind) SELECT id, 'draft' FROM j RETURNING job_id, id`, account, title).Scan(&job, &candidate)
	if err != nil {
		return 0, 0, fmt.Errorf("creating job %q: %w", title, err)
	}
	return job, candidate, nil
}

// checkJob refuses a job that is not the account's, with ErrNotFound.
func checkJob(ctx context.Context, db once.DB, account string, job int64) error {
	var ok bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND account_id = $2)`, job, account).Scan(&ok); err != nil {
		return fmt.Errorf("checking job %d: %w", job, err)
	}
	if !ok {
		return fmt.Errorf("job %d: %w", job, ErrNotFound)
	}
	return nil
}

func pathJob(w http.ResponseWriter, r *http.Request) (int64, bool) {
	job, err := strconv.ParseInt(r.PathValue("job"), 10, 64)
	if err != nil || job <= 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("job %q is not a job id", r.PathValue("job")))
		return 0, false
	}
	return job, true
}

func readJSON(w http.ResponseWriter, r *http.Request, into any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
		return false
	}
	return true
}

// statusOf maps the package's errors to HTTP statuses.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadAction):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrNoSnapshot), errors.Is(err, ErrNoVoiceLock), errors.Is(err, ErrNoProductLock):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
