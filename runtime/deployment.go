package once

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// ErrUnsupportedServer: the connected server accepts a guard's statements but does not keep
// the mechanism its promise rests on (CockroachDB takes advisory-lock calls and locks
// nothing). The guard refuses to run rather than let duplicates through.
var ErrUnsupportedServer = errors.New("once: the server does not honour the guard's mechanism")

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

// checkServer refuses a guard of kind whose mechanism the server behind conn does not
// honour. It reads only what the server said when the connection started (no round trip).
func checkServer(kind, name string, conn *pgconn.PgConn) error {
	return serverRefusal(kind, name, conn.ParameterStatus)
}

// serverRefusal is checkServer over a lookup of the server's parameters.
func serverRefusal(kind, name string, param func(string) string) error {
	crdb := param("crdb_version")
	if crdb == "" {
		return nil
	}
	switch kind {
	case "transaction":
		return fmt.Errorf("%w: %s guard %s: %s accepts pg_advisory_xact_lock and locks nothing, so two callers would both decide; use a unique claim (Forever, Open, Statement, Episode) or a Lease there",
			ErrUnsupportedServer, kind, name, strings.TrimSpace(crdb))
	}
	return nil
}

// ErrAsyncStandby: the server streams to a standby that it does not wait for at commit
// (asynchronous replication, or synchronous_commit off or local). A promotion of that
// standby loses what the server acknowledged last: a claim or latch (its effect may run
// again), a reservation, a settle (the operation stays open, then uncertain). A Warning
// wraps it.
var ErrAsyncStandby = errors.New("once: the server replicates asynchronously: a promoted standby can lose acknowledged claims and outcomes")

// Warning is what VerifyWarnings finds that breaks no guard today but weakens what its
// promise survives. errors.Is(w, ErrAsyncStandby) says which.
type Warning struct {
	// Err is the warning's kind (ErrAsyncStandby).
	Err error
	// Detail says what was seen on the server and what to do.
	Detail string
}

func (w Warning) Error() string { return w.Err.Error() + ": " + w.Detail }

// Unwrap makes errors.Is(w, w.Err) true.
func (w Warning) Unwrap() error { return w.Err }

// replicationSQL reads how the server replicates: whether it is itself a standby; its
// physical standbys streaming (a logical replication slot's reader is none; state is NULL
// where the role may not read it, and counts); those named synchronous; those not (by
// name, where the role may read sync_state); the standbys it names; and whether this
// session's commits wait.
const replicationSQL = `WITH standbys AS (
  SELECT * FROM pg_stat_replication
  WHERE pid NOT IN (SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)
)
SELECT pg_is_in_recovery(),
  (SELECT count(*) FROM standbys WHERE state IS NULL OR state = 'streaming'),
  (SELECT coalesce(string_agg(application_name, ', '), '') FROM standbys WHERE sync_state IN ('async', 'potential')),
  current_setting('synchronous_standby_names'), current_setting('synchronous_commit')`

// replicationWarnings reads how the server db talks to replicates and warns when a
// standby could be promoted without the commits the server acknowledged last.
func replicationWarnings(ctx context.Context, db DB) ([]Warning, error) {
	var standby bool
	var streaming int
	var asyncNames, syncNames, commit string
	if err := db.QueryRow(ctx, replicationSQL).Scan(&standby, &streaming, &asyncNames, &syncNames, &commit); err != nil {
		return nil, fmt.Errorf("once: verify: reading how the server replicates: %w", err)
	}
	if standby || streaming == 0 {
		return nil, nil // a standby refuses every guard's write; no standby, nothing to lose
	}
	var detail string
	switch {
	case strings.TrimSpace(syncNames) == "":
		detail = fmt.Sprintf("%d standby(s) stream from this server and synchronous_standby_names is empty, so no commit waits for one", streaming)
	case commit == "off" || commit == "local":
		detail = fmt.Sprintf("synchronous_standby_names is %q but this session's synchronous_commit is %s, so its commits do not wait for a standby", syncNames, commit)
	case asyncNames != "":
		detail = fmt.Sprintf("the standby(s) %s are not synchronous (synchronous_standby_names is %q): promoting one of them loses what it has not received", asyncNames, syncNames)
	default:
		return nil, nil
	}
	return []Warning{{Err: ErrAsyncStandby, Detail: detail + "; use a synchronous standby (synchronous_standby_names, synchronous_commit=on), or derive provider keys from the operation's key so a repeated effect is dropped by the provider (see the README's \"Behind a pooler, across a failover\")"}}, nil
}
