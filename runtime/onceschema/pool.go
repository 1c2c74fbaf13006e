package onceschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrPoolMode: the pool reaches PostgreSQL through a pooler in transaction mode (PgBouncer
// with pool_mode=transaction, or alike), where two client connections share one server
// session, and pgx is set to keep prepared statements on a server session across round
// trips, which that pooler does not carry. Every guard would fail (SQLSTATE 26000 or 42P05),
// the settle after an effect too, leaving its operation open. Verify returns it.
var ErrPoolMode = errors.New("once: the pool's query exec mode does not work through its transaction pooler")

// verifyPool is Verify's check of how db reaches the server. Only a *pgxpool.Pool can be
// checked: it needs two client connections at once. It looks for the one thing a
// transaction pooler does that a server never does, two client connections served by one
// server session, and only when pgx would keep statements on the session: seen (or a
// statement of the probe failing as every guard's would), the pool is refused.
func verifyPool(ctx context.Context, db DB) error {
	pool, ok := db.(*pgxpool.Pool)
	if !ok || pool.Config().MaxConns < 2 {
		return nil
	}
	mode := pool.Config().ConnConfig.DefaultQueryExecMode
	if mode != pgx.QueryExecModeCacheStatement && mode != pgx.QueryExecModeDescribeExec {
		return nil // exec, simple_protocol and cache_describe send each statement whole
	}
	a, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("once: verify: checking the pool: %w", err)
	}
	defer a.Release()
	b, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("once: verify: checking the pool: %w", err)
	}
	defer b.Release()
	refused := func(err error, shared int32) error {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "26000" && pgErr.Code != "42P05") {
			return nil
		}
		seen := "a statement prepared on one server session was not found on the next"
		if shared != 0 {
			seen = fmt.Sprintf("two connections of the pool were served by one server session (pid %d)", shared)
		}
		return fmt.Errorf("%w: %s, so a pooler in transaction mode sits between the pool and PostgreSQL, and the pool's default_query_exec_mode is %s, which keeps prepared statements on a server session (%v); "+
			"set default_query_exec_mode=exec (or simple_protocol) in the connection string, or pool in session mode",
			ErrPoolMode, seen, mode, err)
	}
	shared := func(pid int32) error {
		return fmt.Errorf("%w: two connections of the pool were served by one server session (pid %d), so a pooler in transaction mode sits between the pool and PostgreSQL, and the pool's default_query_exec_mode is %s, which keeps prepared statements on a server session for the next round trip; "+
			"set default_query_exec_mode=exec (or simple_protocol) in the connection string, or pool in session mode",
			ErrPoolMode, pid, mode)
	}
	// A pooler hands a free server session to the next client, the most recently used
	// first: the one a has just left. A few tries, in case another client took it.
	for try := 0; try < 5; try++ {
		var pa, pb int32
		if err := a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pa); err != nil {
			if r := refused(err, 0); r != nil {
				return r
			}
			return fmt.Errorf("once: verify: checking the pool: %w", err)
		}
		tx, err := b.Begin(ctx)
		if err != nil {
			return fmt.Errorf("once: verify: checking the pool: %w", err)
		}
		err = tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pb)
		sharing := err == nil && pb == pa
		if sharing {
			// b's transaction holds the session a used: a's next statement goes elsewhere.
			err = a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pa)
		}
		tx.Rollback(ctx)
		if err != nil {
			if r := refused(err, pb); r != nil {
				return r
			}
			return fmt.Errorf("once: verify: checking the pool: %w", err)
		}
		if sharing {
			// Two client connections on one server session: a pooler in transaction mode.
			// That a statement followed this time proves nothing: describe_exec's two round
			// trips land on one server session whenever no other client takes it between
			// them, and fail when one does.
			return shared(pb)
		}
	}
	return nil
}
