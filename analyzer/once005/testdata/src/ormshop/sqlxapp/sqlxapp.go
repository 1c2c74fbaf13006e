// Package sqlxapp hands out referral codes through sqlx.
package sqlxapp

import (
	"errors"

	"github.com/jmoiron/sqlx"
)

var ErrTaken = errors.New("already there")

type Referral struct {
	Code    string `db:"code"`
	OwnerID int64  `db:"owner_id"`
}

// UseCoupon records a coupon's use once; nothing in the schema makes it unique.
func UseCoupon(db *sqlx.DB, coupon string) error {
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM coupons_used WHERE coupon = $1`, coupon); err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	_, err := db.Exec(`INSERT INTO coupons_used (coupon) VALUES ($1)`, coupon) // want `insert into coupons_used is decided by a read of coupons_used with no lock, no conflict clause and no unique constraint on \(coupon\)`
	return err
}

// Refer's code is unique in db/schema.sql (referrals_code_key): the second insert fails.
func Refer(db *sqlx.DB, r Referral) error {
	var existing []Referral
	if err := db.Select(&existing, `SELECT code, owner_id FROM referrals WHERE code = $1`, r.Code); err != nil {
		return err
	}
	if len(existing) > 0 {
		return ErrTaken
	}
	_, err := db.NamedExec(`INSERT INTO referrals (code, owner_id) VALUES (:code, :owner_id)`, r)
	return err
}

// UseCouponLocked locks the owner's row first.
func UseCouponLocked(db *sqlx.DB, ownerID int64, coupon string) error {
	tx, err := db.Beginx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	if err := tx.Get(&id, `SELECT id FROM owners WHERE id = $1 FOR UPDATE`, ownerID); err != nil {
		return err
	}
	var n int
	if err := tx.Get(&n, `SELECT count(*) FROM coupons_used WHERE coupon = $1`, coupon); err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	if _, err := tx.Exec(`INSERT INTO coupons_used (coupon) VALUES ($1)`, coupon); err != nil {
		return err
	}
	return tx.Commit()
}
