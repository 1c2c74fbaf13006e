package ideas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"

	once "github.com/oncekit/once/runtime"
)

// Handler returns the app's HTTP interface. Pages answer JSON; the buttons are form posts
// answered with 303 redirects, the way a browser flow goes:
//
//	GET  /orgs/{org}                    the landing page: allowance and runs
//	POST /orgs/{org}/runs               the generate button
//	GET  /runs/{run}                    a run's progress page, with its ideas
//	POST /ideas/{idea}/refine           refine an idea (form: revision, note)
//	POST /ideas/{idea}/dismiss          set an idea aside
//	POST /orgs/{org}/allowance/reset    support gives the month's allowance back
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orgs/{org}", a.landing)
	mux.HandleFunc("POST /orgs/{org}/runs", a.generate)
	mux.HandleFunc("GET /runs/{run}", a.progress)
	mux.HandleFunc("POST /ideas/{idea}/refine", a.refine)
	mux.HandleFunc("POST /ideas/{idea}/dismiss", a.dismiss)
	mux.HandleFunc("POST /orgs/{org}/allowance/reset", a.reset)
	return mux
}

// LandingPath is the landing page of org.
func LandingPath(org int64) string { return "/orgs/" + strconv.FormatInt(org, 10) }

// ProgressPath is the progress page of run.
func ProgressPath(run int64) string { return "/runs/" + strconv.FormatInt(run, 10) }

// generate is the button. Every press ends on a page: the new run's progress page, the
// progress page of the run already in flight, or the landing page when another press holds
// the lease right now or the allowance is used up.
func (a *App) generate(w http.ResponseWriter, r *http.Request) {
	org, ok := pathID(w, r, "org")
	if !ok || !a.orgExists(w, r, org) {
		return
	}
	st, out, err := a.StartGenerationOnce(r.Context(), a.db, org)
	switch {
	case out.Status == once.Busy:
		// A press a moment ago is starting a run right now; the landing page will show it.
		http.Redirect(w, r, LandingPath(org)+"?notice=starting", http.StatusSeeOther)
	case err != nil:
		serverError(w, err)
	case st.Run == 0:
		http.Redirect(w, r, LandingPath(org)+"?notice=allowance-used", http.StatusSeeOther)
	default:
		http.Redirect(w, r, ProgressPath(st.Run), http.StatusSeeOther)
	}
}

// Landing is the landing page of an organisation.
type Landing struct {
	Organisation int64 `json:"organisation"`
	Usage        Usage `json:"allowance"`
	Runs         []Run `json:"runs"`
}

func (a *App) landing(w http.ResponseWriter, r *http.Request) {
	org, ok := pathID(w, r, "org")
	if !ok || !a.orgExists(w, r, org) {
		return
	}
	ctx := r.Context()
	if _, err := closeStale(ctx, a.db, "org_id", org); err != nil {
		serverError(w, err)
		return
	}
	usage, err := CountUsage(ctx, a.db, org)
	if err != nil {
		serverError(w, err)
		return
	}
	runs, err := recentRuns(ctx, a.db, org)
	if err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, Landing{Organisation: org, Usage: usage, Runs: runs})
}

func (a *App) progress(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "run")
	if !ok {
		return
	}
	run, err := LoadRun(r.Context(), a.db, id)
	if answered(w, err, ErrNoRun) {
		return
	}
	writeJSON(w, run)
}

func (a *App) refine(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "idea")
	if !ok {
		return
	}
	revision, err := strconv.Atoi(r.FormValue("revision"))
	if err != nil || revision < 0 {
		http.Error(w, fmt.Sprintf("revision %q: want the idea's revision shown in the form", r.FormValue("revision")), http.StatusBadRequest)
		return
	}
	note := r.FormValue("note")
	if note == "" || len(note) > 500 {
		http.Error(w, "note: want between 1 and 500 bytes saying how to refine the idea", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	idea, err := LoadIdea(ctx, a.db, id)
	if answered(w, err, ErrNoIdea) {
		return
	}
	_, _, err = a.RefineOnce(ctx, a.db, id, revision, note)
	switch {
	case err == nil, errors.Is(err, once.ErrInFlight):
		// Done, or being done by the other tab: the progress page shows it either way.
		http.Redirect(w, r, ProgressPath(idea.RunID), http.StatusSeeOther)
	case errors.Is(err, ErrNotRefinable), errors.Is(err, once.ErrMismatch):
		http.Error(w, err.Error(), http.StatusConflict)
	default:
		serverError(w, err)
	}
}

func (a *App) dismiss(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "idea")
	if !ok {
		return
	}
	idea, err := Dismiss(r.Context(), a.db, id)
	if answered(w, err, ErrNoIdea) {
		return
	}
	http.Redirect(w, r, ProgressPath(idea.RunID), http.StatusSeeOther)
}

func (a *App) reset(w http.ResponseWriter, r *http.Request) {
	org, ok := pathID(w, r, "org")
	if !ok || !a.orgExists(w, r, org) {
		return
	}
	if _, err := ResetAllowance(r.Context(), a.db, org); err != nil {
		serverError(w, err)
		return
	}
	http.Redirect(w, r, LandingPath(org), http.StatusSeeOther)
}

// orgExists answers 404 and reports false for an unknown organisation.
func (a *App) orgExists(w http.ResponseWriter, r *http.Request, org int64) bool {
	return !answered(w, CheckOrganisation(r.Context(), a.db, org), ErrNoOrganisation)
}

// answered answers err, if there is one: 404 when it wraps notFound, 500 otherwise. It
// reports whether it answered.
func answered(w http.ResponseWriter, err, notFound error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, notFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		serverError(w, err)
	}
	return true
}

// pathID reads a positive integer id from the path, or answers 400.
func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		http.Error(w, fmt.Sprintf("%s %q: want a positive integer id", name, r.PathValue(name)), http.StatusBadRequest)
		return 0, false
	}
	return id, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("ideas: writing a page: %v", err)
	}
}

func serverError(w http.ResponseWriter, err error) {
	log.Printf("ideas: %v", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// CreateOrganisation adds an organisation (the app has no sign-up of its own).
func CreateOrganisation(ctx context.Context, db once.DB, id int64, name string) error {
	if _, err := db.Exec(ctx, `INSERT INTO organisations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, name); err != nil {
		return fmt.Errorf("creating organisation %d: %w", id, err)
	}
	return nil
}
