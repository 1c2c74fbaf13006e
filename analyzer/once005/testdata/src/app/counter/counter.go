// Package counter spends a monthly allowance: a read of the total deciding an upsert
// that adds to it.
package counter

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
)

var ErrSpent = errors.New("allowance spent")

type Store struct{ db *pgxpool.Pool }

// Spend reads the month's total, decides there is room, and adds: two calls both read
// room for one more, and both add.
func (s *Store) Spend(ctx context.Context, account int64, month string, n, limit int64) error {
	var used int64
	if err := s.db.QueryRow(ctx, `SELECT coalesce((SELECT used FROM spend WHERE account_id = $1 AND month = $2), 0)`, account, month).Scan(&used); err != nil {
		return err
	}
	if used+n > limit {
		return ErrSpent
	}
	const add = `INSERT INTO spend (account_id, month, used) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, month) DO UPDATE SET used = spend.used + excluded.used`
	_, err := s.db.Exec(ctx, add, account, month, n) // want `upsert into spend adds to the row with no condition \(DO UPDATE without WHERE\), and a read of spend decides it: two calls can both read room under the limit and both add; make the statement decide .* or declare //once:statement on \(\*counter.Store\).Spend`
	return err
}

// SpendDecided lets the statement decide: the WHERE refuses an update over the limit.
func (s *Store) SpendDecided(ctx context.Context, account int64, month string, n, limit int64) error {
	var used int64
	if err := s.db.QueryRow(ctx, `SELECT coalesce((SELECT used FROM spend WHERE account_id = $1 AND month = $2), 0)`, account, month).Scan(&used); err != nil {
		return err
	}
	if used+n > limit {
		return ErrSpent
	}
	_, err := s.db.Exec(ctx, `INSERT INTO spend (account_id, month, used) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, month) DO UPDATE SET used = spend.used + excluded.used WHERE spend.used + excluded.used <= $4`, account, month, n, limit)
	return err
}

// SetPlan sets rather than adds: the last writer wins, nothing is counted twice.
func (s *Store) SetPlan(ctx context.Context, account int64, plan string) error {
	var current string
	if err := s.db.QueryRow(ctx, `SELECT plan FROM plans WHERE account_id = $1`, account).Scan(&current); err != nil {
		return err
	}
	if current == plan {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO plans (account_id, plan) VALUES ($1, $2) ON CONFLICT (account_id) DO UPDATE SET plan = excluded.plan`, account, plan)
	return err
}

// Count adds to a counter nothing is decided from.
func (s *Store) Count(ctx context.Context, page string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO hits (page, n) VALUES ($1, 1) ON CONFLICT (page) DO UPDATE SET n = hits.n + 1`, page)
	return err
}
