// Package tokens keeps one-time tokens; its callers in another package read what each
// function sends from its facts.
package tokens

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Owner returns the user a token belongs to; its error says "no row".
func Owner(ctx context.Context, db *pgxpool.Pool, token string) (int64, error) {
	var user int64
	err := db.QueryRow(ctx, `SELECT user_id FROM invite_tokens WHERE token = $1`, token).Scan(&user)
	return user, err
}

// Drop deletes a token and says nothing of whether it was there.
func Drop(ctx context.Context, db *pgxpool.Pool, token string) error {
	_, err := db.Exec(ctx, `DELETE FROM invite_tokens WHERE token = $1`, token)
	return err
}

// Join adds a member.
func Join(ctx context.Context, db *pgxpool.Pool, user int64) error {
	_, err := db.Exec(ctx, `INSERT INTO members (user_id) VALUES ($1)`, user)
	return err
}

var ErrGone = errors.New("token gone")

// Take deletes a token and fails when it was not there: the second caller gets ErrGone.
func Take(ctx context.Context, db *pgxpool.Pool, token string) error {
	tag, err := db.Exec(ctx, `DELETE FROM invite_tokens WHERE token = $1`, token)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrGone
	}
	return nil
}
