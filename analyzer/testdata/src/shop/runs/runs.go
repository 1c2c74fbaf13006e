// Package runs starts generation runs and queues their jobs.
package runs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var ErrBusy = errors.New("runs: a run is already going")

type Store struct {
	db       *pgxpool.Pool
	queueing sync.Map
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
	err := s.db.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') RETURNING id`, orgID).Scan(&id) // want `insert into runs is decided by a read of runs with no lock, no conflict clause and no unique constraint on \(org_id, status\)`
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

var (
	startMu sync.Mutex
	// starting holds the organisations whose run this process is starting.
	starting = map[int64]bool{}
)

// StartRunInProcess takes a set in memory as its lock: a second replica has a set of its
// own, and both insert.
func (s *Store) StartRunInProcess(ctx context.Context, orgID int64) (int64, error) {
	startMu.Lock()
	if starting[orgID] { // want `package-level map starting is checked then written as the lock around the insert into runs, but it lasts one process: a second replica, or this one after a restart, never saw it, and both insert`
		startMu.Unlock()
		return 0, ErrBusy
	}
	starting[orgID] = true
	startMu.Unlock()
	defer func() {
		startMu.Lock()
		delete(starting, orgID)
		startMu.Unlock()
	}()
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') RETURNING id`, orgID).Scan(&id)
	return id, err
}

// Queue keeps the runs it is queueing in a sync.Map on the store and inserts through a
// helper: the same lock of one process.
func (s *Store) Queue(ctx context.Context, runID int64) error {
	if _, busy := s.queueing.LoadOrStore(runID, struct{}{}); busy { // want `sync.Map field s.queueing is checked then written as the lock around the insert into jobs by \(\*runs.Store\).insertJob`
		return nil
	}
	defer s.queueing.Delete(runID)
	return s.insertJob(ctx, runID)
}

func (s *Store) insertJob(ctx context.Context, runID int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO jobs (run_id) VALUES ($1)`, runID)
	return err
}

// StartRunClaimed keeps the set in front of a claim under the partial unique index: the
// set only spares the database a statement it would refuse.
func (s *Store) StartRunClaimed(ctx context.Context, orgID int64) (int64, error) {
	startMu.Lock()
	if starting[orgID] {
		startMu.Unlock()
		return 0, ErrBusy
	}
	starting[orgID] = true
	startMu.Unlock()
	defer func() {
		startMu.Lock()
		delete(starting, orgID)
		startMu.Unlock()
	}()
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued')
		ON CONFLICT (org_id) WHERE status IN ('queued', 'running') DO NOTHING RETURNING id`, orgID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrBusy
	}
	if err != nil {
		return 0, err
	}
	return id, s.insertJob(ctx, id)
}

// known caches the organisations whose settings row exists.
var known sync.Map

// EnsureSettings creates the organisation's settings row once; the insert is the check,
// and the map spares the statement after the first call.
func (s *Store) EnsureSettings(ctx context.Context, orgID int64) error {
	if _, ok := known.Load(orgID); ok {
		return nil
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO org_settings (org_id) VALUES ($1) ON CONFLICT (org_id) DO NOTHING`, orgID); err != nil {
		return err
	}
	known.Store(orgID, true)
	return nil
}

// lastAudit throttles the audit trail to a row a minute per organisation: a map of times
// that counts nothing as done.
var lastAudit = map[int64]time.Time{}

// AuditStart writes an audit row unless one was written in the last minute.
func (s *Store) AuditStart(ctx context.Context, orgID int64) error {
	startMu.Lock()
	last, ok := lastAudit[orgID]
	if ok && time.Since(last) < time.Minute {
		startMu.Unlock()
		return nil
	}
	lastAudit[orgID] = time.Now()
	startMu.Unlock()
	_, err := s.db.Exec(ctx, `INSERT INTO run_audit (org_id) VALUES ($1)`, orgID)
	return err
}
