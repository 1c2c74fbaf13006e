// Package store keeps the editor's rows: paid actions claimed by key, and each account's
// spend of the month.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned when no row matches.
var ErrNotFound = errors.New("store: not found")

type Action struct {
	ID      string
	Account string
	Key     string
	Status  string
}

type Store struct {
	db *pgxpool.Pool
}

// FindAction returns the action claimed under key for the account, or ErrNotFound.
func (s *Store) FindAction(ctx context.Context, account, key string) (Action, error) {
	a := Action{Account: account, Key: key}
	err := s.db.QueryRow(ctx, `SELECT id, status FROM paid_actions WHERE account_id = $1 AND action_key = $2`, account, key).
		Scan(&a.ID, &a.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return Action{}, ErrNotFound
	}
	if err != nil {
		return Action{}, fmt.Errorf("store: finding action %s: %w", key, err)
	}
	return a, nil
}

// CreateAction inserts a queued action under key.
func (s *Store) CreateAction(ctx context.Context, account, key string) (Action, error) {
	a := Action{Account: account, Key: key, Status: "queued"}
	err := s.db.QueryRow(ctx, `INSERT INTO paid_actions (account_id, action_key, status) VALUES ($1, $2, 'queued') RETURNING id`, account, key).
		Scan(&a.ID)
	if err != nil {
		return Action{}, fmt.Errorf("store: creating action %s: %w", key, err)
	}
	return a, nil
}

// ClaimAction inserts a queued action under key unless the key is taken, and reports
// whether this call claimed it: the insert is the check.
func (s *Store) ClaimAction(ctx context.Context, account, key string) (Action, bool, error) {
	a := Action{Account: account, Key: key, Status: "queued"}
	err := s.db.QueryRow(ctx, `INSERT INTO paid_actions (account_id, action_key, status) VALUES ($1, $2, 'queued')
		ON CONFLICT (account_id, action_key) DO NOTHING RETURNING id`, account, key).Scan(&a.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Action{}, false, nil
	}
	if err != nil {
		return Action{}, false, fmt.Errorf("store: claiming action %s: %w", key, err)
	}
	return a, true, nil
}

// LockAccount holds the account's row until tx ends, so that the account's actions are
// decided one at a time.
func LockAccount(ctx context.Context, tx pgx.Tx, account string) error {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, account); err != nil {
		return fmt.Errorf("store: locking account %s: %w", account, err)
	}
	return nil
}

// Spent returns what the account has spent in the month, in cents.
func (s *Store) Spent(ctx context.Context, account string, month time.Time) (int64, error) {
	var used int64
	err := s.db.QueryRow(ctx, `SELECT coalesce(sum(used), 0) FROM spend WHERE account_id = $1 AND month = $2`, account, month).Scan(&used)
	if err != nil {
		return 0, fmt.Errorf("store: reading spend: %w", err)
	}
	return used, nil
}

// AddSpend adds cents to the account's spend of the month, whatever the total comes to.
func (s *Store) AddSpend(ctx context.Context, account string, month time.Time, cents int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO spend (account_id, month, used) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, month) DO UPDATE SET used = spend.used + excluded.used`, account, month, cents)
	if err != nil {
		return fmt.Errorf("store: adding spend: %w", err)
	}
	return nil
}

// ReserveSpend adds cents only while the month's total stays within limit, in one
// statement, and reports whether it did: no row back is the refusal.
func (s *Store) ReserveSpend(ctx context.Context, account string, month time.Time, cents, limit int64) (bool, error) {
	var used int64
	err := s.db.QueryRow(ctx, `INSERT INTO spend AS s (account_id, month, used) SELECT $1, $2, $3 WHERE $3 <= $4
		ON CONFLICT (account_id, month) DO UPDATE SET used = s.used + excluded.used
		WHERE s.used + excluded.used <= $4
		RETURNING used`, account, month, cents, limit).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: reserving spend: %w", err)
	}
	return true, nil
}
