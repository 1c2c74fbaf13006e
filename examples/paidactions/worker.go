package paidactions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Worker carries out claimed paid actions. Any number of workers can run against one
// database: each takes its own rows (FOR UPDATE SKIP LOCKED). Step and Recover each do one
// unit of work, so tests drive a worker deterministically; Run loops over them.
type Worker struct {
	// DB is the editor's database.
	DB once.DB
	// Provider is the model provider's client.
	Provider *Client
	// Stale is how long an action may stay dispatching before the recovery job takes its
	// worker for dead and asks the provider again; zero means two minutes. Make it longer
	// than the provider's slowest answer.
	Stale time.Duration
	// MaxRequests is how many requests a transaction may send to the provider when the
	// provider keeps failing with 5xx before it is marked failed; zero means 5.
	MaxRequests int
}

// Step takes the oldest queued action and carries it out: hydrate its render inputs from
// its snapshot, call the provider with the transaction's key, attach the result and its
// spend. It reports whether there was an action to take.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	t, err := w.take(ctx, `status = 'queued'`)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, w.carryOut(ctx, t)
}

// Recover is the recovery job: it takes one action whose provider answer was lost
// (unknown), or whose worker has shown no sign of life for Stale, and asks the provider
// again with the same key. A provider that did the work answers with its saved result,
// which is attached to the same transaction: the late result is billed once, never as a
// second action. It reports whether there was an action to recover.
func (w *Worker) Recover(ctx context.Context) (bool, error) {
	t, err := w.take(ctx, `(status = 'unknown' OR (status = 'dispatching' AND dispatched_at < now() - make_interval(secs => $1)))`, w.stale().Seconds())
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, w.carryOut(ctx, t)
}

// Run carries out queued actions and recovers lost answers until ctx ends, looking for new
// work every interval.
func (w *Worker) Run(ctx context.Context, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		for _, step := range []func(context.Context) (bool, error){w.Step, w.Recover} {
			for {
				did, err := step(ctx)
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					return err
				}
				if !did {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// take marks the oldest action matching where as dispatching, counting the provider
// request it is about to send, and returns it; pgx.ErrNoRows when there is none.
func (w *Worker) take(ctx context.Context, where string, args ...any) (Transaction, error) {
	t, err := scanTransaction(w.DB.QueryRow(ctx, `UPDATE paid_actions
SET status = 'dispatching', provider_requests = provider_requests + 1, dispatched_at = now()
WHERE transaction_id = (
	SELECT transaction_id FROM paid_actions
	WHERE `+where+`
	ORDER BY created_at, transaction_id
	LIMIT 1
	FOR UPDATE SKIP LOCKED)
RETURNING `+transactionColumns, args...))
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Transaction{}, fmt.Errorf("taking a paid action: %w", err)
	}
	return t, err
}

// carryOut dispatches a taken action and records what came of it.
func (w *Worker) carryOut(ctx context.Context, t Transaction) error {
	req, err := w.request(ctx, t)
	switch {
	case errors.Is(err, ErrNoSnapshot), errors.Is(err, ErrNoVoiceLock), errors.Is(err, ErrNoProductLock):
		// Nothing was spent, and no retry can bring the lost inputs back.
		return w.fail(ctx, t, err)
	case err != nil:
		// The database failed: the action stays dispatching, and the recovery job takes
		// it up again once it is stale.
		return err
	}
	res, _, err := w.Provider.DispatchOnce(ctx, req)
	var perr *ProviderError
	switch {
	case err == nil:
		return settle(ctx, w.DB, t, res)
	case errors.As(err, &perr) && perr.Retryable():
		// The provider did nothing: queue it again, with the same key, unless it has had its
		// share of requests.
		if t.ProviderRequests >= w.maxRequests() {
			return w.fail(ctx, t, err)
		}
		return w.mark(ctx, t, Queued, err)
	case errors.As(err, &perr):
		return w.fail(ctx, t, err)
	default:
		// A timeout, a dropped connection, a request still running at the provider: the
		// work may have been done. Never retried as new work; the recovery job asks again
		// with the same key.
		return w.mark(ctx, t, Unknown, err)
	}
}

// request builds what the provider is asked for the transaction. It resumes from the
// snapshot the action was claimed with, never from the job's latest inputs or an editor's
// defaults: the voice and the product lock are part of the intent, and every request for
// one transaction must be the same for the provider to honour its key.
func (w *Worker) request(ctx context.Context, t Transaction) (DispatchRequest, error) {
	snap, err := LoadSnapshot(ctx, w.DB, t.JobID, t.RenderInputsVersion)
	if err != nil {
		return DispatchRequest{}, err
	}
	inputs, err := Hydrate(snap, t.Action)
	if err != nil {
		return DispatchRequest{}, err
	}
	return DispatchRequest{TransactionID: t.ID, Action: t.Action, JobID: t.JobID, CandidateID: t.CandidateID,
		InputsVersion: t.RenderInputsVersion, Instruction: t.Instruction, Inputs: inputs}, nil
}

// fail marks the action failed with why; nothing is billed for it.
func (w *Worker) fail(ctx context.Context, t Transaction, why error) error {
	return w.mark(ctx, t, Failed, why)
}

// mark records the action's new status, if it is still as this worker took it: every take
// counts a provider request, so the count tells this take from a later one (a recovery that
// took it over, and perhaps settled it, wins).
func (w *Worker) mark(ctx context.Context, t Transaction, s Status, why error) error {
	_, err := w.DB.Exec(context.WithoutCancel(ctx), `UPDATE paid_actions
SET status = $2, error = $3, settled_at = CASE WHEN $2 IN ('succeeded', 'failed') THEN now() END
WHERE transaction_id = $1 AND status = 'dispatching' AND provider_requests = $4`, t.ID, s, why.Error(), t.ProviderRequests)
	if err != nil {
		return fmt.Errorf("marking %s %s: %w", t.ID, s, err)
	}
	return nil
}

func (w *Worker) stale() time.Duration {
	if w.Stale > 0 {
		return w.Stale
	}
	return 2 * time.Minute
}

func (w *Worker) maxRequests() int {
	if w.MaxRequests > 0 {
		return w.MaxRequests
	}
	return 5
}
