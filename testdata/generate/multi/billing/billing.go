// Package billing takes the accounts package's types as parameters, so its generated file
// imports that package, and a third under a different local name.
package billing

import (
	"context"

	pgxv5 "github.com/jackc/pgx/v5"
	acct "github.com/oncekit/once/testdata/generate/multi/accounts"
)

// Invoice bills an account once per month.
//
//once:forever key=a.ID,month
func Invoice(ctx context.Context, a acct.Account, month int, batch pgxv5.Batch) (map[string][]acct.ID, error) {
	return nil, nil
}

// Notify tells an account's owner, through the provider's idempotency key.
//
//once:provider key=a.Owner prefix=notify
func Notify(ctx context.Context, a *acct.Account, extra ...string) error { return nil }

// recordRefund is unexported, and so are its wrapper and its conflict constant
// (recordRefundOnce, recordRefundConflict).
//
//once:forever table=refunds columns=charge_id
func recordRefund(ctx context.Context, tx pgxv5.Tx, charge string) error {
	_, err := tx.Exec(ctx, "INSERT INTO refunds (charge_id) VALUES ($1) "+recordRefundConflict, charge)
	return err
}
