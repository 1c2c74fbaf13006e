package paidactions

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Spend is one cost-ledger entry: what one transaction cost.
type Spend struct {
	TransactionID   string `json:"transaction_id"`
	Account         string `json:"-"`
	Provider        string `json:"provider"`
	AmountUSDMicros int64  `json:"amount_usd_micros"`
	ProviderJobID   string `json:"provider_job_id"`
	// ProviderRequests is how many requests the provider saw for the transaction when its
	// result was attached: more than one means a retry or a recovery, never a second bill.
	ProviderRequests int `json:"provider_requests"`
}

// RecordSpend writes the transaction's cost-ledger entry. The ledger keeps one entry per
// transaction id: a second worker, a retry or the recovery job attaching the same result
// writes nothing.
//
//once:forever table=cost_ledger columns=transaction_id
func RecordSpend(ctx context.Context, tx pgx.Tx, s Spend) error {
	return once.InsertConflict(tx.QueryRow(ctx, `INSERT INTO cost_ledger
	(transaction_id, account_id, provider, amount_usd_micros, provider_job_id, provider_requests)
VALUES ($1, $2, $3, $4, $5, $6) `+RecordSpendConflict+` RETURNING id`,
		s.TransactionID, s.Account, s.Provider, s.AmountUSDMicros, s.ProviderJobID, s.ProviderRequests).Scan(new(int64)))
}

// AttachResult surfaces the provider's result as a new candidate of the job, owned by the
// transaction, and returns its id. A transaction surfaces one result: attaching it again
// (a racing worker, the recovery job) adds nothing.
//
//once:forever table=candidates columns=transaction_id
func AttachResult(ctx context.Context, tx pgx.Tx, t Transaction, providerJobID string) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO candidates (job_id, transaction_id, kind, parent_id, inputs_version, provider_job_id)
VALUES ($1, $2, $3, $4, $5, $6) `+AttachResultConflict+` RETURNING id`,
		t.JobID, t.ID, t.Action.resultKind(), t.CandidateID, t.RenderInputsVersion, providerJobID).Scan(&id)
	return id, once.InsertConflict(err)
}

// settle attaches the provider's result to the transaction, records its spend and marks it
// succeeded, all in one database transaction: either the action has its result, its ledger
// entry and its status, or none of them.
func settle(ctx context.Context, db once.DB, t Transaction, res DispatchResult) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("settling %s: %w", t.ID, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	candidate, out, err := AttachResultOnce(ctx, tx, t, res.ProviderJobID)
	if err != nil {
		return fmt.Errorf("settling %s: %w", t.ID, err)
	}
	if !out.Ran() {
		if err := tx.QueryRow(ctx, `SELECT id FROM candidates WHERE transaction_id = $1`, t.ID).Scan(&candidate); err != nil {
			return fmt.Errorf("settling %s: reading its attached result: %w", t.ID, err)
		}
	}
	spend := Spend{TransactionID: t.ID, Account: t.Account, Provider: ProviderName, AmountUSDMicros: t.Action.Price(),
		ProviderJobID: res.ProviderJobID, ProviderRequests: t.ProviderRequests}
	if _, err := RecordSpendOnce(ctx, tx, spend); err != nil {
		return fmt.Errorf("settling %s: %w", t.ID, err)
	}
	_, err = tx.Exec(ctx, `UPDATE paid_actions
SET status = 'succeeded', result_candidate_id = $2, provider_job_id = $3, error = NULL, settled_at = now()
WHERE transaction_id = $1 AND status <> 'succeeded'`, t.ID, candidate, res.ProviderJobID)
	if err != nil {
		return fmt.Errorf("settling %s: %w", t.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("settling %s: %w", t.ID, err)
	}
	return nil
}

// Ledger returns the account's cost-ledger entries, oldest first.
func Ledger(ctx context.Context, db once.DB, account string) ([]Spend, error) {
	rows, err := db.Query(ctx, `SELECT transaction_id::text, account_id, provider, amount_usd_micros, provider_job_id, provider_requests
FROM cost_ledger WHERE account_id = $1 ORDER BY id`, account)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	spends, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Spend, error) {
		var s Spend
		err := r.Scan(&s.TransactionID, &s.Account, &s.Provider, &s.AmountUSDMicros, &s.ProviderJobID, &s.ProviderRequests)
		return s, err
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	return spends, nil
}
