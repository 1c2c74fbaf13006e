package onceschema

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

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
