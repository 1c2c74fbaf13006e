// Package runs starts generation runs and queues their jobs.
package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var ErrBusy = errors.New("runs: a run is already going")

type Store struct {
	db *pgxpool.Pool
}

// StartRun counts the open runs, then inserts: two clicks both count zero.
func (s *Store) StartRun(ctx context.Context, orgID int64) (int64, error) {
	var open int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND status IN ('queued', 'running')`, orgID).Scan(&open); err != nil {
		return 0, fmt.Errorf("runs: count open: %w", err)
	}
	if open > 0 {
		return 0, ErrBusy
	}
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') RETURNING id`, orgID).Scan(&id) // want `insert into runs is decided by a read of runs with no lock, no ON CONFLICT and no declared constraint`
	return id, err
}

// StartRunLockedRows locks the runs it finds, which does not lock the run that is not
// there yet.
func (s *Store) StartRunLockedRows(ctx context.Context, tx pgx.Tx, orgID int64) error {
	rows, err := tx.Query(ctx, `SELECT id FROM runs WHERE org_id = $1 AND status = 'running' FOR UPDATE`, orgID)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		return ErrBusy
	}
	_, err = tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'running')`, orgID) // want `insert into runs is decided by a read of runs`
	return err
}

// StartRunUnderOrgLock holds the organisation's row first: concurrent starts queue on it.
func (s *Store) StartRunUnderOrgLock(ctx context.Context, tx pgx.Tx, orgID int64) error {
	var plan string
	if err := tx.QueryRow(ctx, `SELECT plan FROM orgs WHERE id = $1 FOR UPDATE`, orgID).Scan(&plan); err != nil {
		return err
	}
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND status = 'running'`, orgID).Scan(&open); err != nil {
		return err
	}
	if open > 0 {
		return ErrBusy
	}
	_, err := tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'running')`, orgID)
	return err
}

// StartRunAdvisory takes a transaction-scoped advisory lock on the organisation.
func (s *Store) StartRunAdvisory(ctx context.Context, tx pgx.Tx, orgID, lockID int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockID); err != nil {
		return err
	}
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND status = 'running'`, orgID).Scan(&open); err != nil {
		return err
	}
	if open > 0 {
		return ErrBusy
	}
	_, err := tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'running')`, orgID)
	return err
}

// StartRunSerializable runs in a serializable transaction: one of two racing starts fails
// to commit.
func (s *Store) StartRunSerializable(ctx context.Context, orgID int64) error {
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1`, orgID).Scan(&open); err != nil {
		return err
	}
	if open == 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'running')`, orgID); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// Spend decides from the balance under a transaction promise.
//
//once:transaction key=orgID
func (s *Store) Spend(ctx context.Context, tx pgx.Tx, orgID int64) error {
	var used int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM allowance_spends WHERE org_id = $1`, orgID).Scan(&used); err != nil {
		return err
	}
	if used >= 2 {
		return ErrBusy
	}
	_, err := tx.Exec(ctx, `INSERT INTO allowance_spends (org_id) VALUES ($1)`, orgID)
	return err
}

// Subscribe inserts with ON CONFLICT: the insert is the check.
func (s *Store) Subscribe(ctx context.Context, email string) (bool, error) {
	var exists bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM subscribers WHERE email = $1)`, email).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		return false, nil
	}
	tag, err := s.db.Exec(ctx, `INSERT INTO subscribers (email) VALUES ($1) ON CONFLICT (email) DO NOTHING`, email)
	return tag.RowsAffected() == 1, err
}
