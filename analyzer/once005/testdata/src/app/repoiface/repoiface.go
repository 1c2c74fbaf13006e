// Package repoiface reaches its tables through a repository interface implemented in the
// package itself, beside a second implementation that sends no SQL (a test double or
// another store): the service's read decides the insert all the same.
package repoiface

import (
	"context"
	"database/sql"
	"errors"
)

// Repository is what the service needs of a store.
type Repository interface {
	CountInvites(ctx context.Context, team int64, email string) (int, error)
	CreateInvite(ctx context.Context, team int64, email string) error
}

type sqlRepository struct{ db *sql.DB }

func (r *sqlRepository) CountInvites(ctx context.Context, team int64, email string) (int, error) {
	var n int
	err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM invites WHERE team_id = $1 AND email = $2`, team, email).Scan(&n)
	return n, err
}

func (r *sqlRepository) CreateInvite(ctx context.Context, team int64, email string) error {
	_, err := r.db.ExecContext(ctx, `INSERT INTO invites (team_id, email) VALUES ($1, $2)`, team, email)
	return err
}

type memoryRepository struct{ invites map[string]bool }

func (m *memoryRepository) CountInvites(ctx context.Context, team int64, email string) (int, error) {
	if m.invites[email] {
		return 1, nil
	}
	return 0, nil
}

func (m *memoryRepository) CreateInvite(ctx context.Context, team int64, email string) error {
	m.invites[email] = true
	return nil
}

// Service invites people to teams.
type Service struct{ repo Repository }

// Invite counts the invitations and creates one when there is none: two calls both count
// none and both insert.
func (s *Service) Invite(ctx context.Context, team int64, email string) error {
	n, err := s.repo.CountInvites(ctx, team, email)
	if err != nil {
		return err
	}
	if n > 0 {
		return errors.New("already invited")
	}
	return s.repo.CreateInvite(ctx, team, email) // want `insert into invites by \(\*repoiface.sqlRepository\).CreateInvite is decided by a read of invites by \(\*repoiface.sqlRepository\).CountInvites`
}

// Reinvite inserts without a read: nothing decides it.
func (s *Service) Reinvite(ctx context.Context, team int64, email string) error {
	return s.repo.CreateInvite(ctx, team, email)
}
