// Package consume redeems one-time tokens: a read finds the token, a delete consumes it
// and an insert acts on it. Two calls that both find the token both act unless the
// delete refuses the second.
package consume

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"gorm.io/gorm"

	"app/consume/tokens"
)

var ErrUsed = errors.New("token already used")

type Store struct{ db *pgxpool.Pool }

// Redeem deletes the token it found without looking at what the delete removed, then
// opens a session: both calls open one.
func (s *Store) Redeem(ctx context.Context, token string) error {
	var user int64
	if err := s.db.QueryRow(ctx, `SELECT user_id FROM login_tokens WHERE token = $1`, token).Scan(&user); err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM login_tokens WHERE token = $1`, token); err != nil { // want `delete from login_tokens is decided by a read of login_tokens with no row lock, and nothing checks that it removed the row the insert into sessions goes with`
		return err
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sessions (user_id) VALUES ($1)`, user)
	return err
}

// RedeemChecked goes on only when the delete removed the token.
func (s *Store) RedeemChecked(ctx context.Context, token string) error {
	var user int64
	if err := s.db.QueryRow(ctx, `SELECT user_id FROM login_tokens WHERE token = $1`, token).Scan(&user); err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `DELETE FROM login_tokens WHERE token = $1`, token)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrUsed
	}
	_, err = s.db.Exec(ctx, `INSERT INTO sessions (user_id) VALUES ($1)`, user)
	return err
}

// RedeemLocked reads the token FOR UPDATE: the second call waits, then finds none.
func RedeemLocked(ctx context.Context, tx pgx.Tx, token string) error {
	var user int64
	if err := tx.QueryRow(ctx, `SELECT user_id FROM login_tokens WHERE token = $1 FOR UPDATE`, token).Scan(&user); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM login_tokens WHERE token = $1`, token); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO sessions (user_id) VALUES ($1)`, user)
	return err
}

// Expire deletes a token it found and does nothing more: a second delete changes nothing.
func (s *Store) Expire(ctx context.Context, token string) error {
	var user int64
	if err := s.db.QueryRow(ctx, `SELECT user_id FROM login_tokens WHERE token = $1`, token).Scan(&user); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `DELETE FROM login_tokens WHERE token = $1`, token)
	return err
}

// Accept consumes an invitation through the functions of another package.
func (s *Store) Accept(ctx context.Context, token string) error {
	user, err := tokens.Owner(ctx, s.db, token)
	if err != nil {
		return err
	}
	if err := tokens.Drop(ctx, s.db, token); err != nil { // want `delete from invite_tokens by tokens.Drop is decided by a read of invite_tokens by tokens.Owner`
		return err
	}
	return tokens.Join(ctx, s.db, user)
}

type Token struct {
	ID     int64
	Value  string
	UserID int64
}

type Session struct {
	ID     int64
	UserID int64
}

// Exchange is Redeem through gorm.
func Exchange(db *gorm.DB, value string) error {
	var t Token
	if err := db.Where("value = ?", value).First(&t).Error; err != nil {
		return err
	}
	if err := db.Delete(&t).Error; err != nil { // want `delete from tokens is decided by a read of tokens`
		return err
	}
	return db.Create(&Session{UserID: t.UserID}).Error
}

// ExchangeChecked goes on only when gorm's delete removed the row.
func ExchangeChecked(db *gorm.DB, value string) error {
	var t Token
	if err := db.Where("value = ?", value).First(&t).Error; err != nil {
		return err
	}
	res := db.Where("value = ?", value).Delete(&Token{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrUsed
	}
	return db.Create(&Session{UserID: t.UserID}).Error
}

// AcceptChecked consumes through a delete that refuses the second caller.
func (s *Store) AcceptChecked(ctx context.Context, token string) error {
	user, err := tokens.Owner(ctx, s.db, token)
	if err != nil {
		return err
	}
	if err := tokens.Take(ctx, s.db, token); err != nil {
		return err
	}
	return tokens.Join(ctx, s.db, user)
}

// Exchange2 opens the session first and deletes the code after: the same race.
func (s *Store) Exchange2(ctx context.Context, code string) error {
	var user int64
	if err := s.db.QueryRow(ctx, `SELECT user_id FROM auth_codes WHERE code = $1`, code).Scan(&user); err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO refresh_tokens (user_id) VALUES ($1)`, user); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `DELETE FROM auth_codes WHERE code = $1`, code) // want `delete from auth_codes is decided by a read of auth_codes with no row lock, and nothing checks that it removed the row the insert into refresh_tokens goes with`
	return err
}
