// Package declared grants entitlements on a table its //once: directive declares: the
// directive puts a unique index on (user_id, kind), so its insert, and any other of
// the package into that table, is the check.
package declared

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Grant is the hand-written claim the directive declares.
//
//once:forever table=grants columns=user_id,kind
func Grant(ctx context.Context, tx pgx.Tx, user int64, kind string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM grants WHERE user_id = $1 AND kind = $2`, user, kind).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO grants (user_id, kind) VALUES ($1, $2)`, user, kind)
	return err
}

// Regrant checks and inserts into the declared table too: the index refuses the
// second insert.
func Regrant(ctx context.Context, tx pgx.Tx, user int64, kind string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM grants WHERE user_id = $1 AND kind = $2`, user, kind).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO grants (user_id, kind) VALUES ($1, $2)`, user, kind)
	return err
}

// Revoke's table no directive declares.
func Revoke(ctx context.Context, tx pgx.Tx, user int64, kind string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM revocations WHERE user_id = $1 AND kind = $2`, user, kind).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO revocations (user_id, kind) VALUES ($1, $2)`, user, kind) // want `insert into revocations is decided by a read of revocations`
	return err
}
