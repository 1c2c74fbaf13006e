package reports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// generateGuard is GenerateReport's guard name (name= in its directive): the ledger's
// entries and the uncertain operations are filed under it.
const generateGuard = "reports.generate"

// insertJob records a job. The insert is the check: the unique index on operation_id
// (which oncegen emits for this declaration) keeps one job per front-door operation, even
// if the request that records it runs twice.
//
//once:forever table=report_jobs columns=operation_id
func insertJob(ctx context.Context, tx pgx.Tx, job Job) (int64, error) {
	input, err := json.Marshal(job.Input)
	if err != nil {
		return 0, fmt.Errorf("encoding the job's input: %w", err)
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO report_jobs (account_id, submission_id, operation_id, reference, input, replaces)
VALUES ($1, $2, $3, $4, $5, nullif($6::bigint, 0)) `+insertJobConflict+` RETURNING id`,
		job.Account, job.Submission, job.Operation, job.Reference, string(input), job.Replaces).Scan(&id) // text: a []byte goes as bytea in the exec modes a pooler needs
	return id, once.InsertConflict(err)
}

// enqueue records job once for its operation and returns its id: the new job's, or the one
// an earlier run of the same request recorded.
func (app *App) enqueue(ctx context.Context, job Job) (int64, error) {
	id, out, err := insertJobOnce(ctx, app.db, job)
	if err != nil || out.Ran() {
		return id, err
	}
	err = app.db.QueryRow(ctx, `SELECT id FROM report_jobs WHERE operation_id = $1`, job.Operation).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("reading the job of operation %s: %w", job.Operation, err)
	}
	return id, nil
}

// WorkResult counts what one pass of the worker did.
type WorkResult struct {
	// Done counts jobs whose report exists (made now or by another worker).
	Done int
	// Failed counts jobs that failed for good (the submission is gone, the model refused).
	Failed int
	// Uncertain counts jobs whose model call may or may not have happened: they wait for an
	// operator (RetryUncertain).
	Uncertain int
	// Retry counts jobs left queued for the next pass after a failure worth retrying.
	Retry int
	// Busy counts jobs another worker was carrying out.
	Busy int
	// Emails is what the pass's delivery of follow-ups did.
	Emails onceops.DrainResult
}

// Work is one pass of the worker: it carries out every queued job, then delivers the due
// follow-ups (the owners' emails). Any number of workers may run passes at once: a job two
// workers pick up is carried out once, by GenerateReport's promise, so the queue needs no
// lock of its own (and holds no transaction open while the model writes).
func (app *App) Work(ctx context.Context) (WorkResult, error) {
	var res WorkResult
	jobs, err := app.queued(ctx)
	if err != nil {
		return res, err
	}
	for _, job := range jobs {
		state, err := app.runJob(ctx, job)
		if err != nil {
			return res, err
		}
		switch state {
		case "done":
			res.Done++
		case "failed":
			res.Failed++
		case "uncertain":
			res.Uncertain++
		case "busy":
			res.Busy++
		default:
			res.Retry++
		}
	}
	res.Emails, err = app.drain.Run(ctx, app.db)
	if err != nil {
		return res, fmt.Errorf("delivering follow-ups: %w", err)
	}
	return res, nil
}

// queued reads the jobs waiting for a worker, oldest first.
func (app *App) queued(ctx context.Context) ([]Job, error) {
	rows, err := app.db.Query(ctx, `SELECT id, account_id, submission_id, operation_id, reference, input, coalesce(replaces, 0)
FROM report_jobs WHERE state = 'queued' ORDER BY id LIMIT 100`)
	if err != nil {
		return nil, fmt.Errorf("reading queued jobs: %w", err)
	}
	var jobs []Job
	for rows.Next() {
		var j Job
		var input []byte
		if err := rows.Scan(&j.ID, &j.Account, &j.Submission, &j.Operation, &j.Reference, &input, &j.Replaces); err != nil {
			return nil, fmt.Errorf("reading queued jobs: %w", err)
		}
		if err := json.Unmarshal(input, &j.Input); err != nil {
			return nil, fmt.Errorf("job %d: its input: %w", j.ID, err)
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading queued jobs: %w", err)
	}
	return jobs, nil
}

// runJob carries out one job and mirrors its operation's state onto the job's row: done,
// failed or uncertain end its time in the queue; a released operation (a failure worth
// retrying) stays queued. It returns the state, or "busy" when another worker has the job.
func (app *App) runJob(ctx context.Context, job Job) (string, error) {
	receipt, out, err := app.GenerateReportOnce(ctx, app.db, job)
	if err == nil && out.Status == once.InFlight {
		return "busy", nil
	}
	// The operation this call ran, or the one whose outcome it was given.
	opID := out.Claim
	if opID == "" {
		opID = out.Holder
	}
	state, why := "done", ""
	if err != nil {
		why = err.Error()
		if opID == "" {
			// No operation was reached (the database failed, say): the job stays queued.
			return "queued", app.setJob(ctx, job.ID, "queued", "", 0, why)
		}
		scope := once.MustKey(job.Account) // as GenerateReportOnce keys its operations
		op, err := onceops.Lookup(ctx, app.db, generateGuard, scope, once.MustKey(job.ID))
		if err != nil {
			return "", fmt.Errorf("job %d: reading operation %s: %w", job.ID, opID, err)
		}
		state = op.State
		if state == "released" || state == "open" {
			state = "queued"
		}
	}
	return state, app.setJob(ctx, job.ID, state, opID, receipt.Report, why)
}

func (app *App) setJob(ctx context.Context, id int64, state string, generation string, report int64, why string) error {
	_, err := app.db.Exec(ctx, `UPDATE report_jobs SET state = $2, generation_id = coalesce(nullif($3, '')::uuid, generation_id),
	report_id = nullif($4::bigint, 0), error = nullif($5, '') WHERE id = $1`, id, state, generation, report, why)
	if err != nil {
		return fmt.Errorf("job %d: recording %s: %w", id, state, err)
	}
	return nil
}

// Uncertain lists the jobs whose model call may or may not have happened, for an operator
// to reconcile with the provider: the operations once keeps uncertain until resolved.
func (app *App) Uncertain(ctx context.Context) ([]onceops.Operation, error) {
	return onceops.ListUncertain(ctx, app.db, generateGuard, 0)
}

// RetryUncertain is the operator's decision that an uncertain job's model call is to be made
// again (the provider shows no such call, or a second one is an accepted cost): the
// operation is released and the job queued for the next pass.
func (app *App) RetryUncertain(ctx context.Context, jobID int64) error {
	var generation string
	err := app.db.QueryRow(ctx, `SELECT coalesce(generation_id::text, '') FROM report_jobs WHERE id = $1 AND state = 'uncertain'`, jobID).Scan(&generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("job %d is not uncertain", jobID)
	}
	if err != nil {
		return fmt.Errorf("job %d: %w", jobID, err)
	}
	if err := onceops.ResolveRetry(ctx, app.db, generation); err != nil {
		return fmt.Errorf("job %d: %w", jobID, err)
	}
	return app.setJob(ctx, jobID, "queued", "", 0, "")
}
