// Package naive is the paid-actions editor as it was first written, before the claim moved
// to a constraint and the provider key to the transaction: it trusts a read to decide an
// insert, and its cost ledger appends an entry per provider attempt. It is kept to show
// the duplicates those choices make (its tests count them) and the findings oncelint
// reports on it. Do not copy it.
//
// It shares the editor's tables, render-input snapshots and types with package
// paidactions; what differs is only what went wrong:
//
//   - Claim looks the action key up (findByKey) and inserts when it finds nothing
//     (create). Two clicks that both look before either inserts both claim, and both pay.
//   - The worker gives the provider a fresh idempotency key on every attempt, so a retry
//     after a timeout is new work to the provider, and it appends a cost entry for every
//     attempt, so the ledger shows the duplicate as two ordinary charges.
package naive

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/paidactions"
	once "github.com/oncekit/once/runtime"
)

// Store is the naive editor's database.
type Store struct {
	DB once.DB
	// BeforeCreate, when set, runs in Claim between the look-up and the insert. Tests set it
	// to hold every request there until all of them have looked, which is the window that
	// production traffic finds by chance on a busy day.
	BeforeCreate func()
}

// Migrate creates the editor's tables, as its first migration has them, without the
// unique indexes oncegen derives from the //once: directives: the naive editor never
// declared them.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, paidactions.SchemaSQL()); err != nil {
		return fmt.Errorf("naive migrate: %w", err)
	}
	return nil
}

// Claim is the check-then-insert claim: look for the key, and insert a new transaction
// when none is found. It returns the transaction and whether this call created it.
func (s *Store) Claim(ctx context.Context, account string, a paidactions.PaidAction) (paidactions.Transaction, bool, error) {
	a = a.Normalize()
	if err := a.Validate(); err != nil {
		return paidactions.Transaction{}, false, err
	}
	key, err := a.Key()
	if err != nil {
		return paidactions.Transaction{}, false, err
	}
	// findByKey: a transaction already claimed for the key is the duplicate's handle.
	existing := paidactions.Transaction{Account: account, ActionKey: key}
	err = s.DB.QueryRow(ctx, `SELECT transaction_id::text, job_id, action, candidate_id, inputs_version, instruction, status
FROM paid_actions WHERE account_id = $1 AND action_key = $2 LIMIT 1`, account, key).
		Scan(&existing.ID, &existing.JobID, &existing.Action, &existing.CandidateID, &existing.RenderInputsVersion, &existing.Instruction, &existing.Status)
	if err == nil {
		return existing, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return paidactions.Transaction{}, false, fmt.Errorf("looking up the action key: %w", err)
	}
	// create: nothing found, so this call claims it. Nothing stops a second call that looked
	// at the same moment from doing the same.
	if s.BeforeCreate != nil {
		s.BeforeCreate()
	}
	var id string
	const insert = `INSERT INTO paid_actions
	(account_id, action_key, job_id, action, candidate_id, inputs_version, instruction)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING transaction_id::text`
	err = s.DB.QueryRow(ctx, insert, // ONCE005: two clicks that both looked and found nothing both insert
		account, key, a.JobID, a.Action, a.CandidateID, a.RenderInputsVersion, a.Instruction).Scan(&id)
	if err != nil {
		return paidactions.Transaction{}, false, fmt.Errorf("creating the paid action: %w", err)
	}
	return paidactions.Transaction{ID: id, Account: account, ActionKey: key, PaidAction: a, Status: paidactions.Queued}, true, nil
}

// requestID is a fresh random id per provider request, which the naive worker also sends
// as the idempotency key.
func requestID() string { return "req_" + rand.Text() }
