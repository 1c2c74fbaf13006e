package reports

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// ReportInput is what a customer asks for: the parameters of one report.
type ReportInput struct {
	// Tone is the report's register: "plain" (the default) or "formal".
	Tone string `json:"tone,omitempty"`
	// Sections are the headings the report must cover, in order.
	Sections []string `json:"sections,omitempty"`
}

// Job is one report to write: a customer's intention, recorded by the request that asked
// for it, carried out by the worker.
type Job struct {
	// ID is the job's row in report_jobs.
	ID int64
	// Account is the account the job belongs to.
	Account string
	// Submission is the submission to report on.
	Submission int64
	// Operation is the id of the front door's operation (once.operations) that recorded the
	// job.
	Operation string
	// Reference is the client's operation reference (its Idempotency-Key).
	Reference string
	// Input is what the report must be.
	Input ReportInput
	// Replaces is the report a Regenerate asked to replace, or zero.
	Replaces int64
}

// Receipt is what GenerateReport records and replays: which report it made, and what it cost.
type Receipt struct {
	// Report is the report's id.
	Report int64 `json:"report"`
	// ModelCall is the model provider's id for the call that wrote it.
	ModelCall string `json:"model_call"`
	// Tokens is what the call consumed.
	Tokens int64 `json:"tokens"`
}

// Report is a saved report.
type Report struct {
	// ID is the report's id.
	ID int64 `json:"id"`
	// Account is the account it belongs to (never shown: the caller is that account).
	Account string `json:"-"`
	// Job is the job that made it; Submission what it reports on.
	Job        int64 `json:"job"`
	Submission int64 `json:"submission"`
	// Replaces is the report a Regenerate made this one to replace, or zero.
	Replaces int64 `json:"replaces,omitempty"`
	// Body is the report's text.
	Body string `json:"body"`
	// ModelCall is the model provider's id for the call that wrote it.
	ModelCall string `json:"model_call"`
}

// The names under which GenerateReport's work is recorded: the model call's provider key,
// the checkpoint of its answer, the email follow-up, and the ledger's units.
const (
	stepModel = "model"
	// ActionEmailOwner is the follow-up that emails a report's owner.
	ActionEmailOwner = "email-owner"
	// LedgerUsage is the ledger kind of a report deducted from the account's usage;
	// LedgerCost of the tokens its model call consumed.
	LedgerUsage = "usage"
	LedgerCost  = "cost"
)

// modelCall is the model's answer, checkpointed so a retry after it does not ask again.
type modelCall struct {
	Effect string `json:"effect"`
	Body   string `json:"body"`
	Tokens int64  `json:"tokens"`
}

// ownerEmail is the payload of the email-owner follow-up.
type ownerEmail struct {
	To      string `json:"to"`
	Report  int64  `json:"report"`
	Subject string `json:"subject"`
}

// errNoSubmission is a job whose submission is not the account's: terminal, the same on
// every retry.
var errNoSubmission = errors.New("no such submission in the account")

// GenerateReport writes the report a job asks for: it calls the model, saves the report,
// deducts one report from the account's usage and asks for the owner to be emailed. A job is
// carried out once, however many workers pick it up and however often it is retried: the
// promise is declared below, and the guard hands this function the operation's attempt for
// the provider key, the ledger and the follow-up.
//
// repeat=safe: a worker that died mid-call leaves work a successor may redo, because the
// model call carries the operation's idempotency key and the report's insert is its own
// check. The outcome is kept for 30 days, long after any job is retried.
//
//once:forever key=job.ID scope=job.Account retain=720h repeat=safe name=reports.generate
func (app *App) GenerateReport(ctx context.Context, job Job) (Receipt, error) {
	a, ok := once.AttemptFrom(ctx)
	if !ok {
		return Receipt{}, errors.New("reports: GenerateReport runs under its guard: call GenerateReportOnce")
	}
	var call modelCall
	recovered, err := a.Recovered(ctx, stepModel, &call)
	if err != nil {
		return Receipt{}, fmt.Errorf("job %d: %w", job.ID, err)
	}
	if !recovered {
		call, err = app.writeWithModel(ctx, a.ProviderKey(stepModel), job)
		if err != nil {
			return Receipt{}, err
		}
		// The answer is kept before anything else can fail, so a retry of this job uses
		// it instead of asking (and perhaps paying) the model again.
		if err := a.Checkpoint(ctx, app.db, stepModel, call); err != nil {
			return Receipt{}, fmt.Errorf("job %d: %w", job.ID, err)
		}
	}
	id, err := app.saveReport(ctx, Report{Account: job.Account, Job: job.ID, Submission: job.Submission,
		Replaces: job.Replaces, Body: call.Body, ModelCall: call.Effect})
	if err != nil {
		return Receipt{}, fmt.Errorf("job %d: %w", job.ID, err)
	}
	// Written by the statement that settles the operation, unique per operation: no retry
	// or second worker can deduct twice.
	err = a.Record(
		once.LedgerEntry{Kind: LedgerUsage, Unit: "report", Quantity: 1},
		once.LedgerEntry{Kind: LedgerCost, Unit: "token", Quantity: call.Tokens, Detail: map[string]string{"model_call": call.Effect}},
	)
	var to string
	if err == nil {
		err = app.db.QueryRow(ctx, `SELECT email FROM accounts WHERE id = $1`, job.Account).Scan(&to)
	}
	if err == nil {
		err = a.FollowUp(ActionEmailOwner, ownerEmail{To: to, Report: id, Subject: fmt.Sprintf("Your report %d is ready", id)})
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("job %d: %w", job.ID, err)
	}
	return Receipt{Report: id, ModelCall: call.Effect, Tokens: call.Tokens}, nil
}

// writeWithModel asks the model for the report, with key as the idempotency key. Its error
// says what a retry may do: a refusal the provider will repeat is terminal; a lost answer is
// retryable only when the provider deduplicates by key, and otherwise uncertain (the model
// may have run and billed, and asking again may bill twice).
func (app *App) writeWithModel(ctx context.Context, key string, job Job) (modelCall, error) {
	var title, text string
	err := app.db.QueryRow(ctx, `SELECT title, body FROM submissions WHERE id = $1 AND account_id = $2`,
		job.Submission, job.Account).Scan(&title, &text)
	if errors.Is(err, pgx.ErrNoRows) {
		return modelCall{}, once.Terminal(fmt.Errorf("job %d: submission %d: %w", job.ID, job.Submission, errNoSubmission))
	}
	if err != nil {
		return modelCall{}, fmt.Errorf("job %d: reading submission %d: %w", job.ID, job.Submission, err)
	}
	tone := job.Input.Tone
	if tone == "" {
		tone = "plain"
	}
	prompt := fmt.Sprintf("Write a %s report on %q covering %s.\n\n%s", tone, title, sections(job.Input.Sections), text)
	effect, err := app.model.Post(ctx, "/v1/responses", key, map[string]any{"model": "report-writer-1", "input": prompt})
	var refused *ProviderError
	switch {
	case err == nil:
	case errors.Is(err, ErrNoAnswer) && !app.model.Dedupes:
		return modelCall{}, once.Uncertain(fmt.Errorf("job %d: the model may have run: %w", job.ID, err))
	case errors.As(err, &refused) && !refused.Retryable():
		return modelCall{}, once.Terminal(fmt.Errorf("job %d: %w", job.ID, err))
	default:
		return modelCall{}, fmt.Errorf("job %d: %w", job.ID, err)
	}
	// The stand-in model answers with an effect id only; the report's text is built here
	// from the same inputs, as the model's would be.
	body := fmt.Sprintf("A %s report on %q, written by model call %s.\nSections: %s.\nSummary: %d words read.",
		tone, title, effect.ID, sections(job.Input.Sections), len(strings.Fields(text)))
	return modelCall{Effect: effect.ID, Body: body, Tokens: int64(len(strings.Fields(prompt)) + len(strings.Fields(body)))}, nil
}

func sections(s []string) string {
	if len(s) == 0 {
		return "a summary"
	}
	return strings.Join(s, ", ")
}

// saveReport saves a job's report once: a second attempt at the same job finds the report
// the first one saved.
func (app *App) saveReport(ctx context.Context, r Report) (int64, error) {
	id, out, err := insertReportOnce(ctx, app.db, r)
	if err != nil || out.Ran() {
		return id, err
	}
	err = app.db.QueryRow(ctx, `SELECT id FROM reports WHERE job_id = $1`, r.Job).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("reading the report of job %d: %w", r.Job, err)
	}
	return id, nil
}

// insertReport inserts a job's report. The insert is the check: the unique index on job_id
// (which oncegen emits for this declaration) turns a second insert for the same job into no
// row, and the guard into a duplicate.
//
//once:forever table=reports columns=job_id
func insertReport(ctx context.Context, tx pgx.Tx, r Report) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO reports (account_id, job_id, submission_id, replaces, body, model_call)
VALUES ($1, $2, $3, nullif($4::bigint, 0), $5, $6) `+insertReportConflict+` RETURNING id`,
		r.Account, r.Job, r.Submission, r.Replaces, r.Body, r.ModelCall).Scan(&id)
	return id, once.InsertConflict(err)
}
