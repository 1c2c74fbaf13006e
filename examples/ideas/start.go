package ideas

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
)

// App is the ideas app: its database and the paid API it spends money on.
type App struct {
	db    *pgxpool.Pool
	model *Model

	// beforeInsert, when set, runs between the in-flight check and the insert of a new run.
	// Tests use it to hold many starts at that point at once, the window a check alone
	// cannot close.
	beforeInsert func()
}

// New returns the app over db, spending on model.
func New(db *pgxpool.Pool, model *Model) *App {
	return &App{db: db, model: model}
}

// ErrNoOrganisation: no organisation has that id. Nothing was written.
var ErrNoOrganisation = errors.New("ideas: no such organisation")

// Start is what one press of the button led to.
type Start struct {
	// Run is the run to show: the one this press started, or the one already in flight.
	// Zero when the allowance is used up.
	Run int64
	// Started says this press created Run.
	Started bool
	// Usage is the organisation's allowance after the press.
	Usage Usage
}

// CheckOrganisation returns ErrNoOrganisation unless org exists. The handlers call it before
// taking the lease, so a request for an unknown organisation writes nothing at all.
func CheckOrganisation(ctx context.Context, db once.DB, org int64) error {
	var ok bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM organisations WHERE id = $1)`, org).Scan(&ok); err != nil {
		return fmt.Errorf("looking up organisation %d: %w", org, err)
	}
	if !ok {
		return fmt.Errorf("organisation %d: %w", org, ErrNoOrganisation)
	}
	return nil
}

// StartGeneration starts a run for org, unless one is in flight (then it returns that one)
// or the month's allowance is used up. It runs under a lease per organisation: two presses
// a millisecond apart would both pass the in-flight check before either inserted, and the
// lease turns the second away instead. Ten seconds covers check, insert and queueing; a
// process killed while holding it blocks the organisation for no longer than that. The
// lease is the fast answer; the partial unique index behind insertRun is what keeps it true
// if a start ever outlives its lease.
//
//once:lease key=org ttl=10s name=ideas.generate
func (a *App) StartGeneration(ctx context.Context, org int64) (Start, error) {
	var st Start
	err := pgx.BeginFunc(ctx, a.db, func(tx pgx.Tx) error {
		// The slow second press: a run is already in flight, so show it.
		if _, err := closeStale(ctx, tx, "org_id", org); err != nil {
			return err
		}
		id, err := inFlightRun(ctx, tx, org)
		if err != nil || id != 0 {
			st.Run = id
			return err
		}
		if st.Usage, err = CountUsage(ctx, tx, org); err != nil {
			return err
		}
		if st.Usage.Left() == 0 {
			return nil
		}
		if a.beforeInsert != nil {
			a.beforeInsert()
		}
		id, out, err := insertRunOnce(ctx, tx, org)
		if err != nil {
			return err
		}
		if out.Status == once.InFlight {
			// Another start inserted first (its lease had lapsed): show its run.
			st.Run, err = inFlightRun(ctx, tx, org)
			return err
		}
		if _, err := enqueueRunOnce(ctx, tx, id); err != nil {
			return err
		}
		st.Run, st.Started = id, true
		st.Usage.Used++
		return nil
	})
	if err != nil {
		return Start{}, fmt.Errorf("starting a run for organisation %d: %w", org, err)
	}
	return st, nil
}

// inFlightRun returns the id of org's run in flight, or 0.
func inFlightRun(ctx context.Context, db once.DB, org int64) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, `SELECT id FROM runs WHERE org_id = $1 AND `+freshRun+` ORDER BY id LIMIT 1`, org).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("looking for the run in flight of organisation %d: %w", org, err)
	}
	return id, nil
}

// insertRun inserts a queued run for org. The insert is the in-flight check that cannot be
// raced: the runs table holds at most one open run per organisation (a partial unique index
// over the open states), and insertRunConflict makes a second insert return no row.
//
//once:open table=runs columns=org_id status=status open=queued,researching,ideating
func insertRun(ctx context.Context, tx pgx.Tx, org int64) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') `+
		insertRunConflict+` RETURNING id`, org).Scan(&id)
	return id, once.InsertConflict(err)
}

// enqueueRun queues the job that carries run out: one job per run, for ever, in the
// transaction that created the run, so a run exists if and only if its job does.
//
//once:forever table=jobs columns=run_id
func enqueueRun(ctx context.Context, tx pgx.Tx, run int64) error {
	return once.InsertConflict(tx.QueryRow(ctx, `INSERT INTO jobs (run_id) VALUES ($1) `+enqueueRunConflict+` RETURNING run_id`, run).Scan(new(int64)))
}
