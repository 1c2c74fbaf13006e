package ideas

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
)

// Worker carries out queued runs: it takes one job at a time from the jobs table (any
// number of workers can run at once; each takes its own rows) and pays for the run's
// research and ideas.
type Worker struct {
	db    *pgxpool.Pool
	model *Model

	// JobTimeout is how long one attempt at a job may take before the worker kills it and
	// fails the run. Zero means 5 minutes. With the default attempts, every attempt at a run
	// fits in 15 minutes, under StaleAfter: a run being worked on does not look stale
	// unless it first waited long in the queue, and then nobody is waiting for it.
	JobTimeout time.Duration
	// MaxAttempts is how many attempts a job gets before the worker gives up and fails the
	// run. Zero means 3.
	MaxAttempts int
	// Backoff is how long a failed attempt waits before the next. Zero retries at once.
	Backoff time.Duration
}

// NewWorker returns a worker over db, spending on model.
func NewWorker(db *pgxpool.Pool, model *Model) *Worker {
	return &Worker{db: db, model: model, Backoff: 10 * time.Second}
}

// The results of one Step.
const (
	// ResultCompleted: the run completed and its ideas are saved.
	ResultCompleted = "completed"
	// ResultSkipped: the run had already ended (closed as stale while its job waited); the
	// worker spent nothing on it.
	ResultSkipped = "skipped"
	// ResultRetry: the attempt failed; the job will be tried again.
	ResultRetry = "retry"
	// ResultFailed: the worker gave up; the failure hook marked the run failed.
	ResultFailed = "failed"
)

// Job is one job a Step took, and what became of it.
type Job struct {
	ID      int64
	RunID   int64
	Attempt int
	// Result is one of the Result constants; Err is the attempt's error, if any.
	Result string
	Err    error
}

func (w *Worker) timeout() time.Duration {
	if w.JobTimeout > 0 {
		return w.JobTimeout
	}
	return 5 * time.Minute
}

func (w *Worker) maxAttempts() int {
	if w.MaxAttempts > 0 {
		return w.MaxAttempts
	}
	return 3
}

// Step takes the next due job, if any, carries it out and settles it. It reports false when
// no job was due. An error is returned only for the database; what happened to the job is
// in Job.
func (w *Worker) Step(ctx context.Context) (Job, bool, error) {
	var j Job
	// A job is due when queued and available, or when taken by a worker that has been
	// silent past its job's time (killed, most likely): then it is taken over.
	err := w.db.QueryRow(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1,
			locked_until = now() + $1::bigint * interval '1 millisecond'
		WHERE id = (SELECT id FROM jobs
			WHERE (state = 'queued' AND available_at <= now()) OR (state = 'running' AND locked_until < now())
			ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
		RETURNING id, run_id, attempts`, (w.timeout()+time.Minute).Milliseconds()).Scan(&j.ID, &j.RunID, &j.Attempt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("taking a job: %w", err)
	}

	jobCtx, cancel := context.WithTimeout(ctx, w.timeout())
	j.Result, j.Err = w.handle(jobCtx, j.RunID)
	killed := jobCtx.Err() != nil && ctx.Err() == nil
	cancel()
	if j.Err != nil && j.Result != ResultFailed {
		j.Result = ResultRetry
		switch {
		case killed:
			// Killed for running too long: the failure hook runs now, without a retry.
			j.Result = ResultFailed
			j.Err = fmt.Errorf("killed after running longer than %s: %w", w.timeout(), j.Err)
		case j.Attempt >= w.maxAttempts():
			j.Result = ResultFailed
		}
	}
	return j, true, w.settle(ctx, j)
}

// settle records what became of the job, and for a failure runs the failure hook. It acts
// only while this worker still holds the job (same attempt), so a worker that overran its
// lock does not overwrite the attempt that took the job over.
func (w *Worker) settle(ctx context.Context, j Job) error {
	// A job's outcome is recorded even when the worker is being shut down.
	ctx = context.WithoutCancel(ctx)
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		var why *string
		if j.Err != nil {
			s := j.Err.Error()
			why = &s
		}
		state, delay := "done", time.Duration(0)
		switch j.Result {
		case ResultRetry:
			state, delay = "queued", w.Backoff
		case ResultFailed:
			state = "failed"
		}
		tag, err := tx.Exec(ctx, `UPDATE jobs SET state = $3, last_error = $4,
				available_at = now() + $5::bigint * interval '1 millisecond', locked_until = NULL
			WHERE id = $1 AND state = 'running' AND attempts = $2`, j.ID, j.Attempt, state, why, delay.Milliseconds())
		if err != nil {
			return fmt.Errorf("settling job %d: %w", j.ID, err)
		}
		if tag.RowsAffected() == 0 || j.Result != ResultFailed {
			return nil
		}
		// The failure hook: the queue gave up on the job, so the run ends as failed now,
		// rather than saying "researching" until the stale rule closes it.
		return markFailed(ctx, tx, j.RunID, "attempt "+strconv.Itoa(j.Attempt)+": "+*why)
	})
}

// Run takes jobs until ctx ends, looking for new ones every poll when the queue is empty.
func (w *Worker) Run(ctx context.Context, poll time.Duration) error {
	for {
		_, took, err := w.Step(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if took {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// handle carries out one attempt at run.
func (w *Worker) handle(ctx context.Context, id int64) (string, error) {
	// The guard at the top: a run closed as stale while its job waited in the queue has
	// nobody waiting for it, so its research would be paid for and never read.
	if _, err := closeStale(ctx, w.db, "id", id); err != nil {
		return "", err
	}
	var run Run
	var findings *string
	err := w.db.QueryRow(ctx, `SELECT `+runColumns+`, findings FROM runs WHERE id = $1 AND `+freshRun, id).Scan(
		&run.ID, &run.OrgID, &run.State, &run.Day, &run.CreatedAt, &run.FinishedAt, &run.Failure, &findings)
	if errors.Is(err, pgx.ErrNoRows) {
		return ResultSkipped, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading run %d: %w", id, err)
	}

	var f Findings
	if findings != nil {
		// An earlier attempt paid for the research and saved it: only the ideas are left.
		f.Ref = *findings
	} else {
		if ok, err := w.advance(ctx, id, StatusResearching, nil); err != nil || !ok {
			return ResultSkipped, err
		}
		var out once.Outcome
		f, out, err = w.researchTodayOnce(ctx, w.db, run)
		if err != nil {
			return "", err
		}
		if out.Status == once.Refused {
			// Not worth a retry: the cap is per day, and the customer is waiting now.
			return ResultFailed, fmt.Errorf("organisation %d has had its %d research runs of %s", run.OrgID, DailyResearchCap, run.Day)
		}
		if ok, err := w.advance(ctx, id, StatusIdeating, &f.Ref); err != nil || !ok {
			return ResultSkipped, err
		}
	}

	titles, _, err := w.model.IdeateOnce(ctx, run, f)
	if err != nil {
		return "", err
	}
	completed := false
	err = pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET status = 'completed', finished_at = now() WHERE id = $1 AND `+freshRun, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		for i, t := range titles {
			if _, err := tx.Exec(ctx, `INSERT INTO ideas (run_id, position, title) VALUES ($1, $2, $3)`, id, i+1, t); err != nil {
				return err
			}
		}
		completed = true
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("completing run %d: %w", id, err)
	}
	if !completed {
		return ResultSkipped, nil
	}
	return ResultCompleted, nil
}

// advance moves an open, fresh run to status (saving findings when given), and reports
// false if the run had ended meanwhile.
func (w *Worker) advance(ctx context.Context, id int64, status string, findings *string) (bool, error) {
	tag, err := w.db.Exec(ctx, `UPDATE runs SET status = $2, findings = coalesce($3, findings)
		WHERE id = $1 AND `+freshRun, id, status, findings)
	if err != nil {
		return false, fmt.Errorf("moving run %d to %s: %w", id, status, err)
	}
	return tag.RowsAffected() == 1, nil
}

// researchToday pays for run's research, one of the organisation's DailyResearchCap research
// runs of the run's day. Past the cap it is refused before anything is spent.
//
//once:statement key=run.OrgID,run.Day cap=DailyResearchCap name=ideas.research-daily
func (w *Worker) researchToday(ctx context.Context, run Run) (Findings, error) {
	f, _, err := w.model.ResearchOnce(ctx, run)
	return f, err
}
