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

// Import decides through a flag: the read sets it, a later branch on it inserts. The
// decision is the read's all the same.
func Import(ctx context.Context, tx pgx.Tx, account int64, keys []string) error {
	for _, key := range keys {
		create := true
		if _, found, err := store.FindAction(ctx, tx, account, key); err != nil {
			return err
		} else if found {
			create = false
		}
		switch {
		case create:
			if err := store.CreateAction(ctx, tx, account, key); err != nil { // want `insert into paid_actions by store.CreateAction is decided by a read of paid_actions by store.FindAction`
				return err
			}
		default:
		}
	}
	return nil
}

// Tally sets a flag from something else than the read: the insert is not decided by it.
func Tally(ctx context.Context, tx pgx.Tx, account int64, key string, dryRun bool) error {
	if _, _, err := store.FindAction(ctx, tx, account, key); err != nil {
		return err
	}
	write := true
	if dryRun {
		write = false
	}
	if write {
		return store.CreateAction(ctx, tx, account, key)
	}
	return nil
}

// Refresh sets the flag from the read's answer on one path and from elsewhere on another,
// merged in one place: no constant stands for either answer, so the flag is not followed.
func Refresh(ctx context.Context, tx pgx.Tx, account int64, key string, stale func() bool) error {
	create := false
	_, found, err := store.FindAction(ctx, tx, account, key)
	if err != nil {
		return err
	}
	if found {
		if account > 0 {
			create = stale()
		} else {
			create = true
		}
	} else {
		create = true
	}
	if create {
		return store.CreateAction(ctx, tx, account, key)
	}
	return nil
}
