package outreach

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Suppress records that an address, by its hash, asked not to be written to. One row per
// address: a second click on the link, or the same address reached through another
// conversation, finds the row, and the insert does nothing.
//
//once:forever table=suppressions columns=address_hash
func Suppress(ctx context.Context, tx pgx.Tx, addressHash string, at time.Time) error {
	return once.InsertConflict(tx.QueryRow(ctx, `INSERT INTO suppressions (address_hash, created_at) VALUES ($1, $2) `+
		SuppressConflict+` RETURNING address_hash`, addressHash, at).Scan(new(string)))
}

// unsubscribe suppresses the creator a link names; ok is false for a token that names no
// conversation.
func (a *App) unsubscribe(ctx context.Context, token string) (ok bool, err error) {
	var hash string
	err = a.db.QueryRow(ctx, `
		SELECT encode(sha256(lower(cr.email)::bytea), 'hex')
		FROM outreach_threads t JOIN creators cr ON cr.id = t.creator_id
		WHERE t.token = $1`, token).Scan(&hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the address of a link: %w", err)
	}
	if _, err := SuppressOnce(ctx, a.db, hash, a.now()); err != nil {
		return false, err
	}
	return true, nil
}
