package paidactions

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Status is where a paid action stands.
type Status string

// The statuses of a paid action, as stored in paid_actions.status.
const (
	// Queued: claimed, waiting for a worker. Nothing has been spent.
	Queued Status = "queued"
	// Dispatching: a worker is calling the provider.
	Dispatching Status = "dispatching"
	// Unknown: the provider's answer was lost; the recovery job asks again with the same key.
	Unknown Status = "unknown"
	// Succeeded: the result is attached and its cost is in the ledger.
	Succeeded Status = "succeeded"
	// Failed: the action cannot be done; nothing was billed.
	Failed Status = "failed"
)

// Settled reports whether the action has reached an ending.
func (s Status) Settled() bool { return s == Succeeded || s == Failed }

// ErrNotFound: the job, candidate or transaction does not exist for this account.
var ErrNotFound = errors.New("not found")

// Transaction is a claimed paid action: the handle every duplicate of it gets.
type Transaction struct {
	ID        string `json:"transaction_id"`
	Account   string `json:"-"`
	ActionKey string `json:"action_key"`
	PaidAction
	Status Status `json:"status"`
	// ProviderRequests counts the requests sent to the provider for it (a recovery's second
	// request with the same key is counted, and billed by nobody).
	ProviderRequests  int    `json:"provider_requests"`
	ResultCandidateID int64  `json:"result_candidate_id,omitempty"`
	ProviderJobID     string `json:"provider_job_id,omitempty"`
	Error             string `json:"error,omitempty"`
}

// ClaimAction writes the paid action's row before any spend; the row's id is the
// transaction that will own the spend. The insert is the claim: a second claim of the same
// key by the same account inserts nothing, and its caller gets the first one's handle.
//
//once:forever table=paid_actions columns=account_id,action_key
func ClaimAction(ctx context.Context, tx pgx.Tx, account, key string, a PaidAction) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO paid_actions
	(account_id, action_key, job_id, action, candidate_id, inputs_version, instruction)
VALUES ($1, $2, $3, $4, $5, $6, $7) `+ClaimActionConflict+` RETURNING transaction_id::text`,
		account, key, a.JobID, a.Action, a.CandidateID, a.RenderInputsVersion, a.Instruction).Scan(&id)
	return id, once.InsertConflict(err)
}

// Claim claims the paid action for account, after the checks that stop a bad click from
// spending: the job and candidate are the account's, and the render inputs it names hold a
// voice and a product lock. It returns the action's transaction and whether this call
// claimed it (false: a duplicate, given the transaction already claimed, in flight or
// settled).
func Claim(ctx context.Context, db once.DB, account string, a PaidAction) (Transaction, bool, error) {
	a = a.Normalize()
	if err := a.Validate(); err != nil {
		return Transaction{}, false, err
	}
	key, err := a.Key()
	if err != nil {
		return Transaction{}, false, err
	}
	if err := checkOwnership(ctx, db, account, a); err != nil {
		return Transaction{}, false, err
	}
	snap, err := LoadSnapshot(ctx, db, a.JobID, a.RenderInputsVersion)
	if err != nil {
		return Transaction{}, false, err
	}
	if _, err := Hydrate(snap, a.Action); err != nil {
		return Transaction{}, false, err
	}
	id, out, err := ClaimActionOnce(ctx, db, account, key, a)
	if err != nil {
		return Transaction{}, false, fmt.Errorf("claiming %s of job %d: %w", a.Action, a.JobID, err)
	}
	if !out.Ran() {
		// A duplicate: the insert found the key taken. The first claim's row is the handle.
		t, err := LookupKey(ctx, db, account, key)
		return t, false, err
	}
	return Transaction{ID: id, Account: account, ActionKey: key, PaidAction: a, Status: Queued}, true, nil
}

// checkOwnership refuses a job or candidate that is not the account's (ErrNotFound, so
// another account's ids reveal nothing).
func checkOwnership(ctx context.Context, db once.DB, account string, a PaidAction) error {
	var ok bool
	err := db.QueryRow(ctx, `SELECT EXISTS (
	SELECT 1 FROM jobs j JOIN candidates c ON c.job_id = j.id
	WHERE j.id = $1 AND j.account_id = $2 AND c.id = $3)`, a.JobID, account, a.CandidateID).Scan(&ok)
	if err != nil {
		return fmt.Errorf("checking job %d: %w", a.JobID, err)
	}
	if !ok {
		return fmt.Errorf("job %d with candidate %d: %w", a.JobID, a.CandidateID, ErrNotFound)
	}
	return nil
}

const transactionColumns = `transaction_id::text, account_id, action_key, job_id, action, candidate_id, inputs_version,
	instruction, status, provider_requests, coalesce(result_candidate_id, 0), coalesce(provider_job_id, ''), coalesce(error, '')`

func scanTransaction(row pgx.Row) (Transaction, error) {
	var t Transaction
	err := row.Scan(&t.ID, &t.Account, &t.ActionKey, &t.JobID, &t.Action, &t.CandidateID, &t.RenderInputsVersion,
		&t.Instruction, &t.Status, &t.ProviderRequests, &t.ResultCandidateID, &t.ProviderJobID, &t.Error)
	return t, err
}

// LookupKey returns the account's transaction for an action key.
func LookupKey(ctx context.Context, db once.DB, account, key string) (Transaction, error) {
	t, err := scanTransaction(db.QueryRow(ctx, `SELECT `+transactionColumns+`
FROM paid_actions WHERE account_id = $1 AND action_key = $2`, account, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return Transaction{}, fmt.Errorf("action key %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return Transaction{}, fmt.Errorf("reading action key %s: %w", key, err)
	}
	return t, nil
}

// LookupTransaction returns the account's transaction id; another account's is not found.
func LookupTransaction(ctx context.Context, db once.DB, account, id string) (Transaction, error) {
	t, err := scanTransaction(db.QueryRow(ctx, `SELECT `+transactionColumns+`
FROM paid_actions WHERE account_id = $1 AND transaction_id::text = $2`, account, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Transaction{}, fmt.Errorf("transaction %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Transaction{}, fmt.Errorf("reading transaction %s: %w", id, err)
	}
	return t, nil
}
