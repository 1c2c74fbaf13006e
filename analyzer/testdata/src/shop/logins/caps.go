// Package logins opens login sessions and issues sign-in codes: reads that cap how many
// rows there may be, reads that validate the row an insert follows from, and rows keyed
// by an id the call has just made.
package logins

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

var ErrTooMany = errors.New("logins: too many attempts")

// maxPending caps the unverified sessions of a user: an abuse limit, not a promise that
// there is one.
const maxPending = 10

// maxActive is a limit of one row: the same check as "is there one already".
const maxActive = 1

type Store struct {
	db *pgxpool.Pool
}

// OpenSession refuses a user with too many unverified sessions, then opens another:
// each attempt makes its own session by design, and two at once exceed the cap by one
// at most, they duplicate nothing.
func (s *Store) OpenSession(ctx context.Context, userID int64) error {
	var pending int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM login_sessions WHERE user_id = $1 AND verified = false`, userID).Scan(&pending); err != nil {
		return fmt.Errorf("logins: count pending: %w", err)
	}
	if pending >= maxPending {
		return ErrTooMany
	}
	_, err := s.db.Exec(ctx, `INSERT INTO login_sessions (user_id, verified) VALUES ($1, false)`, userID)
	return err
}

// IssueCode caps the live codes by a limit the caller gives.
func (s *Store) IssueCode(ctx context.Context, email, code string, limit int) error {
	rows, err := s.db.Query(ctx, `SELECT code FROM sign_in_codes WHERE email = $1 AND expires_at > now()`, email)
	if err != nil {
		return err
	}
	var live []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return err
		}
		live = append(live, c)
	}
	if len(live) > limit {
		return ErrTooMany
	}
	_, err = s.db.Exec(ctx, `INSERT INTO sign_in_codes (email, code) VALUES ($1, $2)`, email, code)
	return err
}

// countPending reads how many sessions a user has not verified yet.
func (s *Store) countPending(ctx context.Context, userID int64) int {
	var n int
	_ = s.db.QueryRow(ctx, `SELECT count(*) FROM login_sessions WHERE user_id = $1 AND verified = false`, userID).Scan(&n)
	return n
}

// OpenSessionHelper counts through a helper, in the condition itself.
func (s *Store) OpenSessionHelper(ctx context.Context, userID int64) error {
	if s.countPending(ctx, userID) > maxPending {
		return ErrTooMany
	}
	_, err := s.db.Exec(ctx, `INSERT INTO login_sessions (user_id, verified) VALUES ($1, false)`, userID)
	return err
}

// OpenOnlySession allows one active session: a limit of one row is an only-once check,
// and two logins at once both count zero.
func (s *Store) OpenOnlySession(ctx context.Context, userID int64) error {
	var active int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM login_sessions WHERE user_id = $1 AND verified = true`, userID).Scan(&active); err != nil {
		return err
	}
	if active >= maxActive {
		return ErrTooMany
	}
	_, err := s.db.Exec(ctx, `INSERT INTO login_sessions (user_id, verified) VALUES ($1, true)`, userID) // want `insert into login_sessions is decided by a read of login_sessions`
	return err
}

// OpenFirstSession counts against zero: whether a session exists at all.
func (s *Store) OpenFirstSession(ctx context.Context, userID int64) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM login_sessions WHERE user_id = $1`, userID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO login_sessions (user_id, verified) VALUES ($1, false)`, userID) // want `insert into login_sessions is decided by a read of login_sessions`
	return err
}

// RenameCode caps the changes, then checks that the new code is free, on a column
// nothing makes unique: the second read is the only-once check, and is reported.
func (s *Store) RenameCode(ctx context.Context, email, code string) error {
	var changes int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM sign_in_codes WHERE email = $1`, email).Scan(&changes); err != nil {
		return err
	}
	if changes > 3 {
		return ErrTooMany
	}
	var taken int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM sign_in_codes WHERE code = $1`, code).Scan(&taken); err != nil {
		return err
	}
	if taken > 0 {
		return errors.New("logins: code taken")
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sign_in_codes (email, code) VALUES ($1, $2)`, email, code) // want `insert into sign_in_codes is decided by a read of sign_in_codes`
	return err
}
