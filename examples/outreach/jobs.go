package outreach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// The kinds of job the worker runs.
const (
	JobSendOutreach = "send_outreach" // payload jobRef: the conversation
	JobNotifyReply  = "notify_reply"  // payload jobRef: the inbound message
	JobImport       = "import"        // payload importPayload: the city
)

// Job is work queued for the worker.
type Job struct {
	Kind string
	// DedupeKey names the work: while a job with the key is pending or running, queueing
	// the key again is a no-op that reports the job in flight; after it finished, the key
	// can be queued again.
	DedupeKey string
	Payload   any
	RunAfter  time.Time
}

type jobRef struct {
	ID int64 `json:"id"`
}

// EnqueueJob queues a job unless one with the same key is still pending or running.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func EnqueueJob(ctx context.Context, tx pgx.Tx, job Job) (int64, error) {
	payload, err := json.Marshal(job.Payload)
	if err != nil {
		return 0, fmt.Errorf("encoding the %s job's payload: %w", job.Kind, err)
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO jobs (kind, dedupe_key, payload, run_after) VALUES ($1, $2, $3, $4) `+
		EnqueueJobConflict+` RETURNING id`, job.Kind, job.DedupeKey, string(payload), job.RunAfter).Scan(&id) // text: a []byte goes as bytea in the exec modes a pooler needs
	return id, once.InsertConflict(err)
}

// openJob returns the id of the pending or running job with key, for a caller whose
// enqueue found one in flight; ok is false if it finished in between.
func (a *App) openJob(ctx context.Context, key string) (id int64, ok bool, err error) {
	err = a.db.QueryRow(ctx, `SELECT id FROM jobs WHERE dedupe_key = $1 AND status IN ('pending', 'running')`, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("finding the open job %q: %w", key, err)
	}
	return id, true, nil
}

// deferredError asks the worker to put a job back in the queue until a time, without
// counting it as a failure (a daily budget is spent: try tomorrow).
type deferredError struct {
	until  time.Time
	reason string
}

func (e *deferredError) Error() string { return e.reason }

// permanentError fails a job without retrying it.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// maxAttempts is how many times a job is tried before it is marked failed.
const maxAttempts = 5

// Worker runs queued jobs. Any number of workers (goroutines, processes) can run at once:
// each claims its own job with FOR UPDATE SKIP LOCKED.
type Worker struct {
	app *App
}

// Worker returns a worker for the app's queue.
func (a *App) Worker() *Worker { return &Worker{app: a} }

// claimedJob is a job a worker holds.
type claimedJob struct {
	ID        int64
	Kind      string
	DedupeKey string
	Payload   json.RawMessage
	Attempts  int
}

// Step claims one due job, runs it and records how it ended. It reports whether there was
// a job; a job's own failure is recorded on its row, not returned.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	a := w.app
	now := a.now()
	var j claimedJob
	err := a.db.QueryRow(ctx, `
		UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = now()
		WHERE id = (SELECT id FROM jobs WHERE status = 'pending' AND run_after <= $1
		            ORDER BY run_after, id FOR UPDATE SKIP LOCKED LIMIT 1)
		RETURNING id, kind, dedupe_key, payload, attempts`, now).Scan(&j.ID, &j.Kind, &j.DedupeKey, &j.Payload, &j.Attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claiming a job: %w", err)
	}
	runErr := w.run(ctx, j)
	status, runAfter, lastErr := "done", now, ""
	var deferred *deferredError
	var permanent *permanentError
	switch {
	case runErr == nil:
	case errors.As(runErr, &deferred):
		status, runAfter, lastErr = "pending", deferred.until, deferred.reason
	case errors.As(runErr, &permanent) || j.Attempts >= maxAttempts:
		status, lastErr = "failed", runErr.Error()
	default:
		status, runAfter, lastErr = "pending", now.Add(time.Duration(j.Attempts)*30*time.Second), runErr.Error()
	}
	// Settled in a context of its own: a job that ran must not stay "running" because the
	// caller's context ended.
	// attempts fences the settle: if the job was requeued as stale while this worker ran
	// it, and another worker claimed it since, this late settle changes nothing.
	_, err = a.db.Exec(context.WithoutCancel(ctx), `
		UPDATE jobs SET status = $2, run_after = $3, last_error = nullif($4, ''), updated_at = now()
		WHERE id = $1 AND status = 'running' AND attempts = $5`, j.ID, status, runAfter, lastErr, j.Attempts)
	if err != nil {
		return true, fmt.Errorf("recording job %d as %s: %w", j.ID, status, err)
	}
	return true, nil
}

func (w *Worker) run(ctx context.Context, j claimedJob) error {
	a := w.app
	switch j.Kind {
	case JobSendOutreach:
		var r jobRef
		if err := json.Unmarshal(j.Payload, &r); err != nil {
			return &permanentError{fmt.Errorf("job %d: %w", j.ID, err)}
		}
		return a.sendOutreach(ctx, r.ID)
	case JobNotifyReply:
		var r jobRef
		if err := json.Unmarshal(j.Payload, &r); err != nil {
			return &permanentError{fmt.Errorf("job %d: %w", j.ID, err)}
		}
		return a.notifyReply(ctx, r.ID)
	case JobImport:
		var p importPayload
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return &permanentError{fmt.Errorf("job %d: %w", j.ID, err)}
		}
		return a.importCity(ctx, j.ID, p.City)
	}
	return &permanentError{fmt.Errorf("job %d: unknown kind %q", j.ID, j.Kind)}
}

// StaleAfter is how long a job may stay running before it is taken for the job of a
// worker that died, and queued again. Its effects carry keys derived from the job's rows,
// so running it again repeats nothing the providers already did.
const StaleAfter = 10 * time.Minute

// requeueStale puts back in the queue the jobs whose worker died while running them:
// otherwise their keys would stay open, and the same work could never be queued again.
// It goes by the database's clock, like updated_at.
func (w *Worker) requeueStale(ctx context.Context) error {
	_, err := w.app.db.Exec(ctx, `UPDATE jobs SET status = 'pending', last_error = 'requeued: its worker stopped answering'
		WHERE status = 'running' AND updated_at < now() - make_interval(secs => $1)`, StaleAfter.Seconds())
	if err != nil {
		return fmt.Errorf("requeueing stale jobs: %w", err)
	}
	return nil
}

// Drain requeues stale jobs, then steps until no job is due, and returns how many jobs it
// ran.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	if err := w.requeueStale(ctx); err != nil {
		return 0, err
	}
	n := 0
	for {
		ran, err := w.Step(ctx)
		if err != nil || !ran {
			return n, err
		}
		n++
	}
}

// Run drains the queue every poll, and sends yesterday's digests, until ctx ends. A
// database error is logged and tried again at the next poll.
func (w *Worker) Run(ctx context.Context, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if _, err := w.Drain(ctx); err != nil && ctx.Err() == nil {
			slog.Error("outreach worker: draining the queue", "err", err)
		}
		if _, err := w.Tick(ctx); err != nil && ctx.Err() == nil {
			slog.Error("outreach worker: sending digests", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
