package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrOverLimit refuses an action the account's monthly limit has no room for.
var ErrOverLimit = errors.New("actions: over the monthly limit")

// Charge reads the month's spend, compares it with the limit, then adds: two actions that
// both read room for one more both add, and the account goes over.
func (s *Service) Charge(ctx context.Context, account string, month time.Time, cents int64) error {
	var used int64
	err := s.db.QueryRow(ctx, `SELECT used FROM spend WHERE account_id = $1 AND month = $2`, account, month).Scan(&used)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("actions: reading spend: %w", err)
	}
	if used+cents > s.limit {
		return ErrOverLimit
	}
	_, err = s.db.Exec(ctx, addSpend, account, month, cents) // want `upsert into spend adds to the row with no condition \(DO UPDATE without WHERE\), and a read of spend decides it`
	return err
}

const addSpend = `INSERT INTO spend (account_id, month, used) VALUES ($1, $2, $3)
ON CONFLICT (account_id, month) DO UPDATE SET used = spend.used + excluded.used`

// ChargeThroughStore is the same race through the store's helpers.
func (s *Service) ChargeThroughStore(ctx context.Context, account string, month time.Time, cents int64) error {
	used, err := s.store.Spent(ctx, account, month)
	if err != nil {
		return err
	}
	if used+cents > s.limit {
		return ErrOverLimit
	}
	return s.store.AddSpend(ctx, account, month, cents) // want `upsert into spend by \(\*store.Store\).AddSpend adds to the row with no condition \(DO UPDATE without WHERE\), and a read of spend by \(\*store.Store\).Spent decides it`
}

// Reserve lets the statement decide; the read before it only turns away an account that
// is already at its limit without a write.
func (s *Service) Reserve(ctx context.Context, account string, month time.Time, cents int64) error {
	used, err := s.store.Spent(ctx, account, month)
	if err != nil {
		return err
	}
	if used >= s.limit {
		return ErrOverLimit
	}
	ok, err := s.store.ReserveSpend(ctx, account, month, cents, s.limit)
	if err != nil {
		return err
	}
	if !ok {
		return ErrOverLimit
	}
	return nil
}

// RememberPlan keeps the plan the account chose; the read skips a write that would change
// nothing, and the upsert sets the row from the new value, not from the one read.
func (s *Service) RememberPlan(ctx context.Context, account, plan string) error {
	var current string
	err := s.db.QueryRow(ctx, `SELECT plan FROM account_settings WHERE account_id = $1`, account).Scan(&current)
	if err == nil && current == plan {
		return nil
	}
	_, err = s.db.Exec(ctx, `INSERT INTO account_settings (account_id, plan) VALUES ($1, $2)
		ON CONFLICT (account_id) DO UPDATE SET plan = excluded.plan, updated_at = now()`, account, plan)
	return err
}

// CountOpen counts an opening of the editor: a counter that nothing is decided from.
func (s *Service) CountOpen(ctx context.Context, account string, day time.Time) error {
	_, err := s.db.Exec(ctx, `INSERT INTO editor_opens (account_id, day, opens) VALUES ($1, $2, 1)
		ON CONFLICT (account_id, day) DO UPDATE SET opens = editor_opens.opens + 1`, account, day)
	return err
}
