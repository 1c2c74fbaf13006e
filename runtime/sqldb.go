package once

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// SQLDB returns a DB that runs once's statements on the connections of db, a *sql.DB opened
// with pgx's stdlib driver (sql.Open("pgx", url) or stdlib.OpenDB), so an app on database/sql
// needs no second pool. Each statement, or each transaction from Begin to its Commit or
// Rollback, takes one connection from db's pool and speaks pgx's own protocol on it through
// (*sql.Conn).Raw; the connection goes back when the statement's rows are read or closed.
// A claim whose outcome the caller did not see (a cancelled context, a broken connection) is
// cleaned up as on a *pgx.Conn: the guard knows the connection it went on.
//
// Other drivers (lib/pq among them) are refused with an error naming the driver: once's
// statements rely on pgx's types and protocol, and database/sql does not give a connection's
// server process, which the clean-up of an unseen claim needs. An app on lib/pq opens a
// *pgxpool.Pool for once beside its *sql.DB, or moves to pgx's stdlib driver, which speaks
// the same database/sql API.
//
// A DB from SQLDB has no heartbeat: a Forever or Open call on it takes DefaultStale unless
// the call sets Stale.
func SQLDB(db *sql.DB) DB { return &sqlDB{db: db} }

// sqlDB is a DB on a database/sql pool of pgx stdlib connections.
type sqlDB struct{ db *sql.DB }

// acquire takes one connection from the pool and hands its pgx connection over until release
// is called. The pgx connection is only used inside (*sql.Conn).Raw's function, as
// database/sql requires, so that function waits for release on a goroutine of its own.
func (s *sqlDB) acquire(ctx context.Context) (conn *pgx.Conn, release func(), err error) {
	if s.db == nil {
		return nil, nil, fmt.Errorf("%w: SQLDB: nil *sql.DB", ErrInvalid)
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		if cerr := ended(ctx); cerr != nil && !errors.Is(err, cerr) {
			// database/sql dials on the caller's context, and a dial cut short by its
			// deadline says only "i/o timeout": name the context's end, as pgxpool does.
			err = fmt.Errorf("taking a connection from the *sql.DB: %w: %w", cerr, err)
		}
		return nil, nil, err
	}
	got := make(chan *pgx.Conn, 1)
	done := make(chan struct{})
	finished := make(chan error, 1)
	go func() {
		finished <- c.Raw(func(dc any) error {
			sc, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("%w: SQLDB needs pgx's stdlib driver, and the *sql.DB's driver connection is %T", ErrInvalid, dc)
			}
			got <- sc.Conn()
			<-done
			return nil
		})
	}()
	select {
	case conn = <-got:
	case err = <-finished:
		c.Close()
		return nil, nil, err
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			<-finished
			// A connection pgx closed (its statement was interrupted) is dropped by the pool:
			// the stdlib driver reports it bad when it is reset.
			c.Close()
		})
	}
	return conn, release, nil
}

// ended returns ctx's error, or DeadlineExceeded once its deadline has passed: a dial's
// timer can fire a moment before the context's own.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// Begin starts a transaction on a connection of its own, held until Commit or Rollback.
func (s *sqlDB) Begin(ctx context.Context) (pgx.Tx, error) {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		release()
		return nil, err
	}
	return &sqlTx{Tx: tx, release: release}, nil
}

// Exec runs one statement on a connection of its own.
func (s *sqlDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer release()
	return conn.Exec(ctx, sql, args...)
}

// Query runs one query on a connection of its own, held until its rows are read or closed.
func (s *sqlDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		release()
		return nil, err
	}
	return &sqlRows{Rows: rows, release: release}, nil
}

// QueryRow runs one query on a connection of its own, held until the row is scanned.
func (s *sqlDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	conn, release, err := s.acquire(ctx)
	if err != nil {
		return errRow{err}
	}
	return sqlRow{row: conn.QueryRow(ctx, sql, args...), release: release}
}

// sqlTx is a transaction that gives its connection back when it ends.
type sqlTx struct {
	pgx.Tx
	release func()
}

func (t *sqlTx) Commit(ctx context.Context) error {
	defer t.release()
	return t.Tx.Commit(ctx)
}

func (t *sqlTx) Rollback(ctx context.Context) error {
	defer t.release()
	return t.Tx.Rollback(ctx)
}

// sqlRows are rows that give their connection back once read to the end or closed.
type sqlRows struct {
	pgx.Rows
	release func()
}

func (r *sqlRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.release()
	return false
}

func (r *sqlRows) Close() {
	r.Rows.Close()
	r.release()
}

// sqlRow is a row that gives its connection back once scanned.
type sqlRow struct {
	row     pgx.Row
	release func()
}

func (r sqlRow) Scan(dest ...any) error {
	defer r.release()
	return r.row.Scan(dest...)
}

// errRow is a row whose query could not be sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
