// Package store holds paid actions: a look-up, an insert and a lock, each a helper its
// callers in other packages combine. What each sends travels to them as a fact.
package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

type Action struct {
	ID  int64
	Key string
}

// FindAction looks the action up by account and key, and says whether it found one.
func FindAction(ctx context.Context, tx pgx.Tx, account int64, key string) (Action, bool, error) {
	a := Action{Key: key}
	err := tx.QueryRow(ctx, `SELECT id FROM paid_actions WHERE account_id = $1 AND action_key = $2`, account, key).Scan(&a.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Action{}, false, nil
	}
	if err != nil {
		return Action{}, false, err
	}
	return a, true, nil
}

// CreateAction inserts the action.
func CreateAction(ctx context.Context, tx pgx.Tx, account int64, key string) error {
	_, err := tx.Exec(ctx, `INSERT INTO paid_actions (account_id, action_key) VALUES ($1, $2)`, account, key)
	return err
}

// LockAccount holds the account's row until the transaction ends.
func LockAccount(ctx context.Context, tx pgx.Tx, account int64) error {
	_, err := tx.Exec(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, account)
	return err
}

// FindOrCreate reads and inserts itself: judged here, and nothing of paid_actions is
// left for its callers.
func FindOrCreate(ctx context.Context, tx pgx.Tx, account int64, key string) error {
	if _, found, err := FindAction(ctx, tx, account, key); err != nil || found {
		return err
	}
	return CreateAction(ctx, tx, account, key) // want `insert into paid_actions by store.CreateAction is decided by a read of paid_actions by store.FindAction`
}
