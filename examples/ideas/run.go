package ideas

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// StaleAfter is how long a run may stay unfinished before it is taken to have lost its
// worker (a server that lost power runs no failure hook). It is the one definition of
// "stale": the start, the progress page, the allowance and the worker all read it through
// freshRun and staleRun, so they cannot disagree about it.
const StaleAfter = 20 * time.Minute

// The states of a run. Queued, researching and ideating are open: the run is in flight.
// Completed, failed and stale are endings.
const (
	StatusQueued      = "queued"
	StatusResearching = "researching"
	StatusIdeating    = "ideating"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusStale       = "stale"
)

// The stale rule as SQL, over a runs row. It is built from StaleAfter (not written out
// again) and is a literal, not a parameter, so each statement that uses it reads the same.
var (
	staleInterval = "interval '" + strconv.Itoa(int(StaleAfter/time.Second)) + " seconds'"
	openRun       = "status IN ('queued', 'researching', 'ideating')"
	// freshRun: the run is in flight and young enough to have a worker behind it.
	freshRun = openRun + " AND created_at > now() - " + staleInterval
	// staleRun: the run is in flight on paper, but nobody is working on it any more.
	staleRun = openRun + " AND created_at <= now() - " + staleInterval
)

// Run is one generation: research, then ideas, for one organisation.
type Run struct {
	ID    int64  `json:"id"`
	OrgID int64  `json:"org_id"`
	State string `json:"status"`
	// Day is the UTC date the run was started, the key of the daily research cap: the same
	// on every attempt at the run, whenever the attempt happens.
	Day        string     `json:"day"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Failure    string     `json:"failure,omitempty"`
	Ideas      []Idea     `json:"ideas,omitempty"`
}

// ErrNoRun: no run has that id.
var ErrNoRun = errors.New("ideas: no such run")

const runColumns = `id, org_id, status, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
	created_at, finished_at, coalesce(failure, '')`

func scanRun(row pgx.Row) (Run, error) {
	var r Run
	err := row.Scan(&r.ID, &r.OrgID, &r.State, &r.Day, &r.CreatedAt, &r.FinishedAt, &r.Failure)
	return r, err
}

// closeStale closes as stale the open runs that nobody is working on any more, among those
// whose column by ("org_id" or "id") is id, and returns how many it closed. Every place that
// asks "is this run in flight?" calls it first, so a run whose worker died never blocks the
// next press, never shows as running, and never counts against the allowance.
func closeStale(ctx context.Context, db once.DB, by string, id int64) (int64, error) {
	tag, err := db.Exec(ctx, `UPDATE runs SET status = 'stale', finished_at = now(),
		failure = 'no worker finished it within `+StaleAfter.String()+`'
		WHERE `+by+` = $1 AND `+staleRun, id)
	if err != nil {
		return 0, fmt.Errorf("closing stale runs (%s %d): %w", by, id, err)
	}
	return tag.RowsAffected(), nil
}

// LoadRun reads a run with its ideas, applying the stale rule first: a progress page never
// shows "researching" for a run that no process is researching.
func LoadRun(ctx context.Context, db once.DB, id int64) (Run, error) {
	if _, err := closeStale(ctx, db, "id", id); err != nil {
		return Run{}, err
	}
	r, err := scanRun(db.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return Run{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	r.Ideas, err = runIdeas(ctx, db, id)
	if err != nil {
		return Run{}, err
	}
	return r, nil
}

// recentRuns lists org's last 20 runs, newest first.
func recentRuns(ctx context.Context, db once.DB, org int64) ([]Run, error) {
	rows, err := db.Query(ctx, `SELECT `+runColumns+` FROM runs WHERE org_id = $1 ORDER BY id DESC LIMIT 20`, org)
	if err != nil {
		return nil, fmt.Errorf("listing the runs of organisation %d: %w", org, err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) { return scanRun(row) })
	if err != nil {
		return nil, fmt.Errorf("listing the runs of organisation %d: %w", org, err)
	}
	return runs, nil
}

// markFailed is the job's failure hook: it ends an open run as failed, with why. A run that
// already reached an ending (completed, or closed as stale) keeps it.
func markFailed(ctx context.Context, db once.DB, run int64, why string) error {
	if _, err := db.Exec(ctx, `UPDATE runs SET status = 'failed', finished_at = now(), failure = $2
		WHERE id = $1 AND `+openRun, run, why); err != nil {
		return fmt.Errorf("marking run %d failed: %w", run, err)
	}
	return nil
}
