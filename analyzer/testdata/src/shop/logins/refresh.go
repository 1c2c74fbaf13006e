package logins

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

var ErrInvalid = errors.New("logins: invalid token")

type Token struct {
	ID        int64
	UserID    int64
	ExpiresAt time.Time
}

// findToken returns the token issued under refresh, or nil.
func (s *Store) findToken(ctx context.Context, refresh string) (*Token, error) {
	t := &Token{}
	err := s.db.QueryRow(ctx, `SELECT id, user_id, expires_at FROM tokens WHERE refresh = $1`, refresh).Scan(&t.ID, &t.UserID, &t.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return t, err
}

// Refresh validates the refresh token, then issues a new one: the insert runs where the
// read found its row, so the read is a validation, not a look for the row the insert
// makes.
func (s *Store) Refresh(ctx context.Context, refresh, next string) error {
	t, err := s.findToken(ctx, refresh)
	if err != nil || t == nil {
		return ErrInvalid
	}
	if t.ExpiresAt.Before(time.Now()) {
		return ErrInvalid
	}
	_, err = s.db.Exec(ctx, `INSERT INTO tokens (user_id, refresh) VALUES ($1, $2)`, t.UserID, next)
	return err
}

// RefreshCounted validates by a count, the insert in the else of its absent branch.
func (s *Store) RefreshCounted(ctx context.Context, userID int64, refresh, next string) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM tokens WHERE refresh = $1`, refresh).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return ErrInvalid
	} else {
		_, err := s.db.Exec(ctx, `INSERT INTO tokens (user_id, refresh) VALUES ($1, $2)`, userID, next)
		return err
	}
}

// Issue looks for the user's token and issues one when there is none: the insert is on
// the path where the read found nothing, and two calls both issue.
func (s *Store) Issue(ctx context.Context, userID int64, refresh string) error {
	t, err := s.findToken(ctx, refresh)
	if err != nil {
		return err
	}
	if t != nil {
		return nil
	}
	_, err = s.db.Exec(ctx, `INSERT INTO tokens (user_id, refresh) VALUES ($1, $2)`, userID, refresh) // want `insert into tokens is decided by a read of tokens by \(\*logins.Store\).findToken`
	return err
}

// IssueCounted inserts inside the branch that found none.
func (s *Store) IssueCounted(ctx context.Context, userID int64, refresh string) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM tokens WHERE refresh = $1`, refresh).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		_, err := s.db.Exec(ctx, `INSERT INTO tokens (user_id, refresh) VALUES ($1, $2)`, userID, refresh) // want `insert into tokens is decided by a read of tokens`
		return err
	}
	return nil
}

// IssueFlagged tests a bool, whose name, not its type, says which way it points: it
// still decides.
func (s *Store) IssueFlagged(ctx context.Context, userID int64, refresh string) error {
	var missing bool
	if err := s.db.QueryRow(ctx, `SELECT count(*) = 0 FROM tokens WHERE refresh = $1`, refresh).Scan(&missing); err != nil {
		return err
	}
	if !missing {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO tokens (user_id, refresh) VALUES ($1, $2)`, userID, refresh) // want `insert into tokens is decided by a read of tokens`
	return err
}
