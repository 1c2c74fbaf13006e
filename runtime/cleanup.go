package once

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

// A claim is one auto-committed statement. When its round trip ends in the caller's context
// error or a broken connection, the server may have committed it or not: the caller holds a
// claim it does not know of, and would leave its key blocked (in flight until the stale
// window, then uncertain) for work that never ran. The caller does know the claim's owner
// token, though, so the guard finds out by itself, on a short context of its own that the
// caller's cancellation does not reach, and withdraws the claim by that token if it landed.
//
// "If it landed" needs care: pgx closes a connection whose statement the context
// interrupted, but the server may not have read the statement yet, or may still be running
// it, and commits it all the same. So the clean-up first waits for the server process that
// ran the claim to end (it ends as soon as it reads the closed connection); from then on the
// claim's fate is fixed, and the token says whether it is there. A process that does not end
// within backendWait (blocked behind a lock) is terminated, which aborts an uncommitted claim.
//
// Behind a pooler in transaction mode (PgBouncer) the process id pgx was given is the
// pooler's, not a server's, and the claim ran on whichever server connection was free. The
// pooler closes that connection when its client goes away mid-statement, but the server
// still runs the statement it has read, and commits it. The clean-up tells the two cases
// apart by asking its own connection for pg_backend_pid(): where it differs from the pid pgx
// holds, something sits between. It then waits for every statement on once's tables that
// the database's other server processes are running at that moment to end (or move on),
// bounded by backendWait, terminating none: one of them is the claim, and the others are
// short. A claim the server reads only after the clean-up looked (the pooler had forwarded
// it, but the server process had not yet been scheduled to read it) would escape that wait,
// so behind a pooler a withdrawal that finds nothing is repeated, lateRechecks after the
// first, in the background on the pool (or before returning on a single connection): a
// token's claim lands at most once, and a withdrawal by token is idempotent, so the repeats
// cost a statement each and can only take back the caller's own claim. A claim that lands
// later still, or whose clean-up cannot reach the database at all, is left to the stale
// window (or, for a Statement reservation or an Episode firing, to a refund or a rearm).

// cleanupTimeout bounds the clean-up of one claim whose outcome the caller did not see.
const cleanupTimeout = 5 * time.Second

// backendWait is how long the clean-up waits for the server process that ran an unseen
// claim to end by itself before terminating it.
const backendWait = time.Second

// lateRechecks are the delays, from the first withdrawal behind a pooler that found nothing,
// at which it is repeated.
var lateRechecks = [...]time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}

// A withdrawal takes back, by its token, a claim whose caller did not see it land, and
// reports whether it found one.
type withdrawal func(context.Context, DB) (bool, error)

// claimSite says where a claim was sent, for its clean-up.
type claimSite struct {
	sent   bool      // the claim may have reached the server
	inTx   bool      // sent inside the caller's transaction: it lives and dies with it
	conn   *pgx.Conn // the connection it went on, when known
	pid    uint32    // that connection's server process
	closed bool      // pgx closed the connection after the claim's error
}

// sendClaim runs send, which sends a claim, on one connection of db whose server process is
// known, so that an unseen outcome can be resolved. On a pool it acquires the connection
// itself, as the pool's own QueryRow would; the connection goes back when send returns.
func sendClaim(ctx context.Context, db DB, send func(DB) error) (claimSite, error) {
	switch d := db.(type) {
	case *pgxpool.Pool:
		c, err := d.Acquire(ctx)
		if err != nil {
			return claimSite{}, err // nothing was sent
		}
		defer c.Release()
		conn := c.Conn()
		site := claimSite{sent: true, conn: conn, pid: conn.PgConn().PID()}
		err = send(conn)
		site.closed = conn.IsClosed()
		return site, err
	case *sqlDB:
		conn, release, err := d.acquire(ctx)
		if err != nil {
			return claimSite{}, err // nothing was sent
		}
		defer release()
		site := claimSite{sent: true, conn: conn, pid: conn.PgConn().PID()}
		err = send(conn)
		site.closed = conn.IsClosed()
		return site, err
	case *pgx.Conn:
		site := claimSite{sent: true, conn: d, pid: d.PgConn().PID()}
		err := send(d)
		site.closed = d.IsClosed()
		return site, err
	case pgx.Tx:
		return claimSite{sent: true, inTx: true}, send(d)
	}
	return claimSite{sent: true}, send(db)
}

// unseen reports whether err leaves the claim sent at site unknown: sent outside a
// transaction, and answered neither by the server (a server error means the statement, and
// so the claim, was rolled back) nor refused before anything was sent.
func (s claimSite) unseen(err error) bool {
	if err == nil || !s.sent || s.inTx || errors.Is(err, pgx.ErrNoRows) || pgconn.SafeToRetry(err) {
		return false
	}
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr)
}

// resolveClaim, after a claim sent at site failed with err, withdraws the claim if its
// outcome is unknown (see the top of this file), with withdraw, on a context of its own. It
// returns err, joined with the clean-up's own error if the clean-up failed.
func resolveClaim(ctx context.Context, db DB, site claimSite, err error, withdraw withdrawal) error {
	if !site.unseen(err) {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	cdb := db
	if c, ok := db.(*pgx.Conn); ok && c.IsClosed() {
		// The caller's only connection died with the claim: the clean-up dials its own.
		nc, cerr := retryConnect(cctx, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, c.Config()) })
		if cerr != nil {
			return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up cannot connect: %w", errClaimLeft, cerr))
		}
		defer nc.Close(cctx)
		cdb = nc
	}
	pool, _ := cdb.(*pgxpool.Pool)
	if pool != nil {
		// One connection for the whole clean-up: its own pid tells a pooler apart.
		c, aerr := retryConnect(cctx, pool.Acquire)
		if aerr != nil {
			return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up cannot connect: %w", errClaimLeft, aerr))
		}
		defer c.Release()
		cdb = c.Conn()
	}
	sdb, _ := cdb.(*sqlDB)
	if sdb != nil {
		type held struct {
			conn    *pgx.Conn
			release func()
		}
		h, aerr := retryConnect(cctx, func(ctx context.Context) (held, error) {
			c, release, err := sdb.acquire(ctx)
			return held{c, release}, err
		})
		if aerr != nil {
			return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up cannot connect: %w", errClaimLeft, aerr))
		}
		defer h.release()
		cdb = h.conn
	}
	pooled := false
	if site.closed && site.pid != 0 {
		var werr error
		if pooled, werr = waitClaimEnded(cctx, cdb, site.pid); werr != nil {
			return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up could not wait for it: %w", errClaimLeft, werr))
		}
	}
	found, werr := withdraw(cctx, cdb)
	if werr != nil {
		return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up failed: %w", errClaimLeft, werr))
	}
	if !pooled || found {
		return err
	}
	var shared DB // a pool the late rechecks can run on after the call returns
	if pool != nil {
		shared = pool
	} else if sdb != nil {
		shared = sdb
	}
	if shared != nil {
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			recheck(lctx, shared, withdraw, lateRechecks[:])
		}()
		return err
	}
	if werr := recheck(cctx, cdb, withdraw, lateRechecks[:]); werr != nil {
		return errors.Join(err, fmt.Errorf("%w: the claim's outcome is unknown and the clean-up failed: %w", errClaimLeft, werr))
	}
	return err
}

// retryConnect calls connect until it gives a connection or ctx ends, pausing a little longer
// each time. The clean-up runs just after connections broke, and the next ones can break
// too: database/sql, for one, hands a waiting caller a released connection whose session
// check then fails, and gives up after three such. The clean-up's own time bound is better
// spent trying again than leaving the key to the stale window. An error no retry cures
// (lasting) ends it at once.
func retryConnect[T any](ctx context.Context, connect func(context.Context) (T, error)) (T, error) {
	pause := 10 * time.Millisecond
	for {
		c, err := connect(ctx)
		if err == nil || ended(ctx) != nil || lasting(err) {
			return c, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return c, err
		case <-t.C:
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// lasting reports an error that trying to connect again does not cure: a DB once cannot
// use (ErrInvalid), a closed pool or *sql.DB, or a server that refused the connection for a
// reason other than a connection fault or its load (a wrong password, a missing database).
func lasting(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return !strings.HasPrefix(pgErr.Code, "08") && pgErr.Code != "53300" && pgErr.Code != "57P03"
	}
	// database/sql's error for a closed *sql.DB is not exported.
	return errors.Is(err, ErrInvalid) || errors.Is(err, puddle.ErrClosedPool) || strings.Contains(err.Error(), "sql: database is closed")
}

// recheck repeats withdraw at the delays at (lateRechecks), until one finds the claim, ctx
// ends or a withdrawal fails: behind a pooler a claim can reach the server after the first.
func recheck(ctx context.Context, db DB, withdraw withdrawal, at []time.Duration) error {
	start := time.Now()
	for _, at := range at {
		t := time.NewTimer(time.Until(start.Add(at)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		found, err := withdraw(ctx, db)
		if err != nil || found {
			return err
		}
	}
	return nil
}

// waitClaimEnded waits until the statement of a claim sent on a connection that pgx knew as
// pid, and has since closed, can no longer commit: the server process pid has ended, or,
// behind a pooler, every statement on once's tables running now has (see the top of this
// file). It reports whether it found a pooler in between.
func waitClaimEnded(ctx context.Context, db DB, pid uint32) (pooled bool, err error) {
	pooled, err = behindPooler(ctx, db)
	if err != nil {
		return false, err
	}
	if pooled {
		return true, waitRunningStatements(ctx, db)
	}
	return false, waitBackendGone(ctx, db, pid)
}

// behindPooler reports whether db, one connection, reaches the server through something
// that hides the server's process id from pgx (a pooler), by comparing the two.
func behindPooler(ctx context.Context, db DB) (bool, error) {
	c, ok := db.(*pgx.Conn)
	if !ok {
		return false, nil
	}
	var server int64
	if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&server); err != nil {
		return false, fmt.Errorf("reading the server's process id: %w", err)
	}
	return uint32(server) != c.PgConn().PID(), nil
}

// runningStatementsSQL lists the statements on once's tables that other server processes
// of the database are running, each by its process and the time it started.
const runningStatementsSQL = `SELECT pid, query_start FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
  AND backend_type = 'client backend' AND query LIKE '%once.%'`

// stillRunningSQL counts those of the listed statements ($1 pids, $2 start times) that still
// run.
const stillRunningSQL = `SELECT count(*) FROM pg_stat_activity a
JOIN unnest($1::int[], $2::timestamptz[]) AS s(pid, query_start) ON a.pid = s.pid AND a.query_start = s.query_start
WHERE a.state = 'active'`

// waitRunningStatements waits, at most backendWait, until every statement on once's tables
// that other server processes run now has ended: behind a pooler, the one of an unseen claim
// cannot be told from the others.
func waitRunningStatements(ctx context.Context, db DB) error {
	rows, err := db.Query(ctx, runningStatementsSQL)
	if err != nil {
		return fmt.Errorf("listing running statements: %w", err)
	}
	var pids []int32
	var starts []time.Time
	for rows.Next() {
		var pid int32
		var start time.Time
		if err := rows.Scan(&pid, &start); err != nil {
			rows.Close()
			return fmt.Errorf("listing running statements: %w", err)
		}
		pids, starts = append(pids, pid), append(starts, start)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing running statements: %w", err)
	}
	deadline := time.Now().Add(backendWait)
	pause := time.Millisecond
	for len(pids) > 0 && time.Now().Before(deadline) {
		var n int
		if err := db.QueryRow(ctx, stillRunningSQL, pids, starts).Scan(&n); err != nil {
			return fmt.Errorf("waiting for running statements: %w", err)
		}
		if n == 0 {
			return nil
		}
		if err := backOff(ctx, &pause); err != nil {
			return err
		}
	}
	return nil
}

// backOff sleeps for *pause, or until ctx ends, and doubles *pause up to 20 ms: the
// clean-up's polls of the server.
func backOff(ctx context.Context, pause *time.Duration) error {
	t := time.NewTimer(*pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	*pause = min(*pause*2, 20*time.Millisecond)
	return nil
}

// waitBackendGone waits until the server process pid has ended, terminating it after
// backendWait. A pid the server does not know (already gone) returns at once.
func waitBackendGone(ctx context.Context, db DB, pid uint32) error {
	deadline := time.Now().Add(backendWait)
	pause := time.Millisecond
	for {
		var alive bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, int64(pid)).Scan(&alive); err != nil {
			return fmt.Errorf("looking for server process %d: %w", pid, err)
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			// The process still runs the dead connection's statement, blocked: end it, which
			// rolls back what it has not committed, and wait for it to go.
			var gone bool
			if err := db.QueryRow(ctx, `SELECT pg_terminate_backend($1, $2)`, int64(pid), backendWait.Milliseconds()).Scan(&gone); err != nil {
				return fmt.Errorf("terminating server process %d: %w", pid, err)
			}
			return nil
		}
		if err := backOff(ctx, &pause); err != nil {
			return err
		}
	}
}

// Withdrawals of a claim whose caller never ran the function, by the claim's token.

// unseenReason is what a withdrawn claim records where it keeps a reason.
const unseenReason = "the caller's call ended before it learned of its claim; the function did not run"

// withdrawForeverSQL deletes a first attempt's unseen claim: nothing of the operation exists
// beyond its row. releaseForeverSQL releases a later attempt's (a takeover), keeping what the
// earlier attempts left, as a retryable failure does.
const (
	withdrawForeverSQL = `DELETE FROM once.operations
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open' AND attempts = 1 AND recovery_point IS NULL`
	releaseForeverSQL = `UPDATE once.operations SET state = 'released', settled_at = clock_timestamp(), error = $5
WHERE name = $1 AND scope = $2 AND key = $3 AND token = $4 AND state = 'open'`
)

// withdrawForever withdraws the forever claim with token on p's key.
func (p *foreverCall) withdrawUnseen(token string) withdrawal {
	return func(ctx context.Context, db DB) (bool, error) {
		tag, err := db.Exec(ctx, withdrawForeverSQL, p.name, p.ref.Scope, p.ref.Key, token)
		if err != nil {
			return false, p.errorf(err, "withdrawing an unseen claim")
		}
		if tag.RowsAffected() == 1 {
			return withdrew(1), nil
		}
		tag, err = db.Exec(ctx, releaseForeverSQL, p.name, p.ref.Scope, p.ref.Key, token, unseenReason)
		if err != nil {
			return false, p.errorf(err, "releasing an unseen claim")
		}
		return withdrew(tag.RowsAffected()), nil
	}
}

// withdrew reports whether n, the rows a withdrawal changed, holds a claim.
func withdrew(n int64) bool { return n > 0 }

// withdrawOpenSQL closes an Open guard's unseen claim as failed.
const withdrawOpenSQL = `UPDATE once.open_claims SET state = 'failed', closed_at = clock_timestamp(), reason = $4
WHERE name = $1 AND key = $2 AND token = $3 AND state = 'open'`

func withdrawOpen(name, key, token string) withdrawal {
	return func(ctx context.Context, db DB) (bool, error) {
		tag, err := db.Exec(ctx, withdrawOpenSQL, name, key, token, unseenReason)
		if err != nil {
			return false, fmt.Errorf("once: open guard %s: closing an unseen claim: %w", name, err)
		}
		return withdrew(tag.RowsAffected()), nil
	}
}

// withdrawLease releases a lease whose acquisition the caller did not see.
func withdrawLease(name, key, token string) withdrawal {
	return func(ctx context.Context, db DB) (bool, error) {
		tag, err := db.Exec(ctx, releaseSQL, name, key, token)
		if err != nil {
			return false, fmt.Errorf("once: lease guard %s: releasing an unseen lease: %w", name, err)
		}
		return withdrew(tag.RowsAffected()), nil
	}
}
