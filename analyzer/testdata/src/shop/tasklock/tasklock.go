// Package tasklock is a hand-written lease in a table: a cron takes it before its run,
// so a second instance skips the run.
package tasklock

import (
	"database/sql"
	"time"
)

type Repo struct{ DB *sql.DB }

// AcquireLock takes the lease unless another holder's is still running: the upsert's
// WHERE refuses a live lease, and the row count says which happened.
func (r *Repo) AcquireLock(name string, until, now int64) (bool, error) {
	res, err := r.DB.Exec(`INSERT INTO task_lock(task_name, lock_until) VALUES ($1, $2)
		ON CONFLICT (task_name) DO UPDATE SET lock_until = $2 WHERE task_lock.lock_until < $3`, name, until, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// Stamp records the lease with no condition: a second holder takes it again.
func (r *Repo) Stamp(name string, until int64) (bool, error) {
	res, err := r.DB.Exec(`INSERT INTO task_lock(task_name, lock_until) VALUES ($1, $2)
		ON CONFLICT (task_name) DO UPDATE SET lock_until = $2`, name, until)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Locker is what crons use: false when the lease is held elsewhere.
type Locker struct{ Repo *Repo }

func (l *Locker) TryLock(name string, d time.Duration) bool {
	now := time.Now()
	ok, err := l.Repo.AcquireLock(name, now.Add(d).UnixMicro(), now.UnixMicro())
	if err != nil || !ok {
		return false
	}
	return true
}

// TryStamp looks like TryLock, but its statement refuses nothing.
func (l *Locker) TryStamp(name string, d time.Duration) bool {
	ok, err := l.Repo.Stamp(name, time.Now().Add(d).UnixMicro())
	return err == nil && ok
}
