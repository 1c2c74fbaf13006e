package naive

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schema string

// Migrate creates the naive app's tables.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	if _, err := db.Exec(ctx, schema); err != nil {
		return fmt.Errorf("naive: creating the tables: %w", err)
	}
	return nil
}

// MonthlyAllowance is how many generations an organisation gets a month.
const MonthlyAllowance = 2

// App is the naive ideas app.
type App struct {
	db *pgxpool.Pool

	// BeforeInsert, when set, runs between the in-flight check and the insert. Tests hold
	// every press there until all have checked: the window a check alone leaves open.
	BeforeInsert func()
}

// New returns the naive app over db.
func New(db *pgxpool.Pool) *App { return &App{db: db} }

// CreateOrganisation adds an organisation.
func CreateOrganisation(ctx context.Context, db *pgxpool.Pool, id int64, name string) error {
	if _, err := db.Exec(ctx, `INSERT INTO organisations (id, name) VALUES ($1, $2)`, id, name); err != nil {
		return fmt.Errorf("naive: creating organisation %d: %w", id, err)
	}
	return nil
}

// Handler returns the naive app's button and progress page.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orgs/{org}/runs", a.generate)
	mux.HandleFunc("GET /runs/{run}", a.progress)
	return mux
}

func (a *App) generate(w http.ResponseWriter, r *http.Request) {
	org, err := strconv.ParseInt(r.PathValue("org"), 10, 64)
	if err != nil || org <= 0 {
		http.Error(w, "org: want a positive integer id", http.StatusBadRequest)
		return
	}
	run, err := a.StartRun(r.Context(), org)
	switch {
	case err != nil:
		log.Printf("naive: %v", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
	case run == 0:
		http.Redirect(w, r, "/orgs/"+strconv.FormatInt(org, 10)+"?notice=allowance-used", http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/runs/"+strconv.FormatInt(run, 10), http.StatusSeeOther)
	}
}

// StartRun starts a run for org unless one is in flight or the allowance is used up, and
// returns the run to show (0 when the allowance is used up).
func (a *App) StartRun(ctx context.Context, org int64) (int64, error) {
	// The in-flight check, on its own. A run that will never finish is in flight for ever.
	var inFlight int64
	err := a.db.QueryRow(ctx, `SELECT id FROM runs WHERE org_id = $1 AND status IN ('queued', 'researching', 'ideating') ORDER BY id LIMIT 1`, org).Scan(&inFlight)
	if err == nil {
		return inFlight, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("naive: looking for a run in flight: %w", err)
	}
	used, err := CountUsage(ctx, a.db, org)
	if err != nil {
		return 0, err
	}
	if used >= MonthlyAllowance {
		return 0, nil
	}
	if a.BeforeInsert != nil {
		a.BeforeInsert()
	}
	var id int64
	if err := a.db.QueryRow(ctx, `INSERT INTO runs (org_id) VALUES ($1) RETURNING id`, org).Scan(&id); err != nil { // ONCE005: checked above, not here
		return 0, fmt.Errorf("naive: inserting a run: %w", err)
	}
	if _, err := a.db.Exec(ctx, `INSERT INTO jobs (run_id) VALUES ($1)`, id); err != nil {
		return 0, fmt.Errorf("naive: queueing run %d: %w", id, err)
	}
	return id, nil
}

// CountUsage counts every run of org this month, whatever became of it: a failed run and a
// run stuck for ever count as much as one delivered.
func CountUsage(ctx context.Context, db *pgxpool.Pool, org int64) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND created_at >= date_trunc('month', now(), 'UTC')`, org).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("naive: counting the allowance: %w", err)
	}
	return n, nil
}

func (a *App) progress(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("run"), 10, 64)
	if err != nil {
		http.Error(w, "run: want an integer id", http.StatusBadRequest)
		return
	}
	var status string
	if err := a.db.QueryRow(r.Context(), `SELECT status FROM runs WHERE id = $1`, id).Scan(&status); err != nil {
		http.Error(w, "no such run", http.StatusNotFound)
		return
	}
	fmt.Fprintf(w, "run %d: %s\n", id, status)
}
