// Package claims starts jobs: a read of a job's state deciding an UPDATE that sets the
// next one. Two workers that both read "pending" both win a claim that does not refuse
// the second.
package claims

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"gorm.io/gorm"
)

var ErrNotPending = errors.New("not pending")

type Worker struct{ db *pgxpool.Pool }

// Start reads the state and sets the next with no old-state predicate: both win.
func (w *Worker) Start(ctx context.Context, id int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	if state != "pending" {
		return ErrNotPending
	}
	_, err := w.db.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1`, id) // want `update of jobs is decided by a read of jobs with no row lock, and the update claims nothing`
	return err
}

// StartChecked claims from the old state and goes on only when it changed the row.
func (w *Worker) StartChecked(ctx context.Context, id int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	if state != "pending" {
		return ErrNotPending
	}
	tag, err := w.db.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1 AND state = 'pending'`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotPending
	}
	return nil
}

// StartReturning claims from the old state and reads the row back: no row, no claim.
func (w *Worker) StartReturning(ctx context.Context, id int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	if state != "pending" {
		return ErrNotPending
	}
	var got int64
	return w.db.QueryRow(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1 AND state = 'pending' RETURNING id`, id).Scan(&got)
}

// StartUnchecked has the predicate but never looks at what it changed: the loser goes
// on as if it had won.
func (w *Worker) StartUnchecked(ctx context.Context, id int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	if state != "pending" {
		return ErrNotPending
	}
	_, err := w.db.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1 AND state = 'pending'`, id) // want `update of jobs is decided by a read of jobs`
	return err
}

// StartLocked reads the row FOR UPDATE in the transaction: the second waits, then reads
// "running".
func StartLocked(ctx context.Context, tx pgx.Tx, id int64) error {
	var state string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 FOR UPDATE`, id).Scan(&state); err != nil {
		return err
	}
	if state != "pending" {
		return ErrNotPending
	}
	_, err := tx.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1`, id)
	return err
}

// StartFound looks for the job in its old state, then sets the next: the same race.
func (w *Worker) StartFound(ctx context.Context, id int64) error {
	var got int64
	if err := w.db.QueryRow(ctx, `SELECT id FROM jobs WHERE id = $1 AND state = 'pending'`, id).Scan(&got); err != nil {
		return err
	}
	_, err := w.db.Exec(ctx, `UPDATE jobs SET state = 'running' WHERE id = $1`, id) // want `update of jobs is decided by a read of jobs`
	return err
}

// Clear resets a field to its zero value: two workers both clear it, and nothing is
// won twice.
func (w *Worker) Clear(ctx context.Context, id int64) error {
	var email string
	if err := w.db.QueryRow(ctx, `SELECT pending_email FROM users WHERE id = $1`, id).Scan(&email); err != nil {
		return err
	}
	if email == "" {
		return nil
	}
	_, err := w.db.Exec(ctx, `UPDATE users SET pending_email = '' WHERE id = $1`, id)
	return err
}

// Disable checks the link's owner, then disables it: the test is of another column
// than the one set, an authorisation, not a claim.
func (w *Worker) Disable(ctx context.Context, id, user int64) error {
	var owner int64
	if err := w.db.QueryRow(ctx, `SELECT owner_id FROM links WHERE id = $1`, id).Scan(&owner); err != nil {
		return err
	}
	if owner != user {
		return ErrNotPending
	}
	_, err := w.db.Exec(ctx, `UPDATE links SET disabled = true WHERE id = $1`, id)
	return err
}

// claimCoupon is a claim in itself: the old state in the WHERE, the rows it changed
// checked.
func (w *Worker) claimCoupon(ctx context.Context, code string, user int64) error {
	tag, err := w.db.Exec(ctx, `UPDATE coupons SET state = 'claimed', claimed_by = $1 WHERE code = $2 AND state = 'open'`, user, code)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotPending
	}
	return nil
}

// markCoupon sets the state and looks at nothing.
func (w *Worker) markCoupon(ctx context.Context, code string, user int64) error {
	_, err := w.db.Exec(ctx, `UPDATE coupons SET state = 'claimed', claimed_by = $1 WHERE code = $2`, user, code)
	return err
}

// Redeem reads the coupon's state and claims it through the helper: only one wins.
func (w *Worker) Redeem(ctx context.Context, code string, user int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM coupons WHERE code = $1`, code).Scan(&state); err != nil {
		return err
	}
	if state != "open" {
		return ErrNotPending
	}
	return w.claimCoupon(ctx, code, user)
}

// RedeemMarked sets the state through a helper that claims nothing: both win.
func (w *Worker) RedeemMarked(ctx context.Context, code string, user int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM coupons WHERE code = $1`, code).Scan(&state); err != nil {
		return err
	}
	if state != "open" {
		return ErrNotPending
	}
	return w.markCoupon(ctx, code, user) // want `update of coupons by \(\*claims.Worker\).markCoupon is decided by a read of coupons`
}

// Touch sets no state: a timestamp two workers may both write.
func (w *Worker) Touch(ctx context.Context, id int64) error {
	var state string
	if err := w.db.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	if state == "done" {
		return nil
	}
	_, err := w.db.Exec(ctx, `UPDATE jobs SET seen_at = now() WHERE id = $1`, id)
	return err
}

// Job is a gorm model.
type Job struct {
	ID    int64
	State string
}

// StartGorm claims through gorm, with the same race.
func StartGorm(db *gorm.DB, id int64) error {
	var j Job
	if err := db.First(&j, id).Error; err != nil {
		return err
	}
	if j.State != "pending" {
		return ErrNotPending
	}
	return db.Model(&j).Update("state", "running").Error // want `update of jobs is decided by a read of jobs`
}

// StartGormChecked claims from the old state and checks the rows it changed.
func StartGormChecked(db *gorm.DB, id int64) error {
	var j Job
	if err := db.First(&j, id).Error; err != nil {
		return err
	}
	if j.State != "pending" {
		return ErrNotPending
	}
	res := db.Model(&j).Where("state = ?", "pending").Update("state", "running")
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotPending
	}
	return nil
}

// checkOwner finds the open coupon and refuses another owner's: its error means more
// than "no row", so a caller testing it decides by ownership, not by the state.
func (w *Worker) checkOwner(ctx context.Context, code string, user int64) error {
	var owner int64
	if err := w.db.QueryRow(ctx, `SELECT owner_id FROM coupons WHERE code = $1 AND state = 'open'`, code).Scan(&owner); err != nil {
		return err
	}
	if owner != user {
		return ErrNotPending
	}
	return nil
}

// Close closes the owner's coupon: guarded by the owner, no claim.
func (w *Worker) Close(ctx context.Context, code string, user int64) error {
	if err := w.checkOwner(ctx, code, user); err != nil {
		return err
	}
	_, err := w.db.Exec(ctx, `UPDATE coupons SET state = 'closed' WHERE code = $1`, code)
	return err
}
