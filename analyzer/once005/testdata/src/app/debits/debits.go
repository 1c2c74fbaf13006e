// Package debits takes amounts from balances and quotas: a read of an amount tested
// against what is needed, then an update writing back the amount worked out in Go. Two
// calls both read the old amount, both pass the test, and one write overwrites the other.
package debits

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"gorm.io/gorm"
)

var ErrInsufficient = errors.New("insufficient balance")

type Bank struct{ db *pgxpool.Pool }

// Debit tests the balance it read and writes back the difference.
func (b *Bank) Debit(ctx context.Context, id, price int64) error {
	var balance int64
	if err := b.db.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1`, id).Scan(&balance); err != nil {
		return err
	}
	if balance < price {
		return ErrInsufficient
	}
	_, err := b.db.Exec(ctx, `UPDATE accounts SET balance = $1 WHERE id = $2`, balance-price, id) // want `update of accounts writes back an amount worked out from a read of accounts, which tests it`
	return err
}

// DebitInSQL lets the statement test and subtract, and goes on only when it did.
func (b *Bank) DebitInSQL(ctx context.Context, id, price int64) error {
	var balance int64
	if err := b.db.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1`, id).Scan(&balance); err != nil {
		return err
	}
	if balance < price {
		return ErrInsufficient
	}
	tag, err := b.db.Exec(ctx, `UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1`, price, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrInsufficient
	}
	return nil
}

// DebitLocked reads the balance FOR UPDATE: the second call waits for the first.
func DebitLocked(ctx context.Context, tx pgx.Tx, id, price int64) error {
	var balance int64
	if err := tx.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1 FOR UPDATE`, id).Scan(&balance); err != nil {
		return err
	}
	if balance < price {
		return ErrInsufficient
	}
	_, err := tx.Exec(ctx, `UPDATE accounts SET balance = $1 WHERE id = $2`, balance-price, id)
	return err
}

// Visit counts with nothing deciding on the count: a lost increment, no overrun.
func (b *Bank) Visit(ctx context.Context, id int64) error {
	var visits int64
	if err := b.db.QueryRow(ctx, `SELECT visits FROM accounts WHERE id = $1`, id).Scan(&visits); err != nil {
		return err
	}
	_, err := b.db.Exec(ctx, `UPDATE accounts SET visits = $1 WHERE id = $2`, visits+1, id)
	return err
}

// Rename writes what it was given, not what it read.
func (b *Bank) Rename(ctx context.Context, id int64, name string) error {
	var old string
	if err := b.db.QueryRow(ctx, `SELECT name FROM accounts WHERE id = $1`, id).Scan(&old); err != nil {
		return err
	}
	if old == name {
		return nil
	}
	_, err := b.db.Exec(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, name, id)
	return err
}

type Invitation struct {
	ID    int64
	Code  string
	Used  int
	Quota int
}

// Redeem takes one use of an invitation's quota through gorm, counting in Go.
func Redeem(db *gorm.DB, code string) error {
	var inv Invitation
	if err := db.Where("code = ?", code).First(&inv).Error; err != nil {
		return err
	}
	if inv.Used >= inv.Quota {
		return ErrInsufficient
	}
	inv.Used++
	return db.Model(&inv).Update("used", inv.Used).Error // want `update of invitations writes back an amount worked out from a read of invitations`
}

// RedeemRow counts in the row it read and writes the row back.
func RedeemRow(db *gorm.DB, code string) error {
	var inv Invitation
	if err := db.Where("code = ?", code).First(&inv).Error; err != nil {
		return err
	}
	if inv.Used >= inv.Quota {
		return ErrInsufficient
	}
	inv.Used += 1
	return db.Updates(&inv).Error // want `update of invitations writes back an amount worked out from a read of invitations`
}

// Touch writes back a row whose counted field nothing tested.
func Touch(db *gorm.DB, code string) error {
	var inv Invitation
	if err := db.Where("code = ?", code).First(&inv).Error; err != nil {
		return err
	}
	if inv.Code == "" {
		return ErrInsufficient
	}
	inv.Used += 1
	return db.Updates(&inv).Error
}

// DebitCAS writes the new balance only where the old one still stands, and goes on only
// when it did: a compare-and-set.
func (b *Bank) DebitCAS(ctx context.Context, id, price int64) error {
	var balance int64
	if err := b.db.QueryRow(ctx, `SELECT balance FROM accounts WHERE id = $1`, id).Scan(&balance); err != nil {
		return err
	}
	if balance < price {
		return ErrInsufficient
	}
	tag, err := b.db.Exec(ctx, `UPDATE accounts SET balance = $1 WHERE id = $2 AND balance = $3`, balance-price, id, balance)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrInsufficient
	}
	return nil
}
