// Package service claims paid actions through the store package's helpers.
package service

import (
	"context"

	"github.com/jackc/pgx/v5"

	"app/store"
)

// Claim looks the action up and creates it when absent, through helpers of another
// package: the decision is here, and so is the finding.
func Claim(ctx context.Context, tx pgx.Tx, account int64, key string) error {
	_, found, err := store.FindAction(ctx, tx, account, key)
	if err != nil {
		return err
	}
	if found {
		return nil
	}
	return store.CreateAction(ctx, tx, account, key) // want `insert into paid_actions by store.CreateAction is decided by a read of paid_actions by store.FindAction`
}

// ClaimLocked locks the account first, through a helper, in the same transaction.
func ClaimLocked(ctx context.Context, tx pgx.Tx, account int64, key string) error {
	if err := store.LockAccount(ctx, tx, account); err != nil {
		return err
	}
	_, found, err := store.FindAction(ctx, tx, account, key)
	if err != nil || found {
		return err
	}
	return store.CreateAction(ctx, tx, account, key)
}

// Retry calls the store's own find-or-create, judged there.
func Retry(ctx context.Context, tx pgx.Tx, account int64, key string) error {
	return store.FindOrCreate(ctx, tx, account, key)
}
