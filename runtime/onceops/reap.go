package onceops

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// DefaultReapBatch is how many expired operations one reaper statement deletes when the batch
// given is zero.
const DefaultReapBatch = 1000

// reapSQL deletes one batch of expired operations, with their checkpoints and the follow-ups
// they enqueued that are delivered: a delivered follow-up is kept only while its operation
// is (its provider key is what a retry of the operation would send again). Small batches
// keep each statement's locks and WAL short, so reaping a backlog never stalls the claims
// running beside it; SKIP LOCKED steps around a row a claim is forgetting right now. Ledger
// entries stay: they are records of work that happened. So do follow-ups not yet delivered,
// or dead: they are work still owed, and are deleted when delivered. Only rows claimed
// before the end of the last day rolled up are deleted: the overview counts a day from its
// roll-up once it is over, so a row whose day is not counted yet stays until it is.
const reapSQL = `WITH rolled AS (
	SELECT coalesce((max(day) + 1)::timestamp AT TIME ZONE 'UTC', '-infinity') AS until FROM once.rolled_days
), gone AS (
	DELETE FROM once.operations WHERE (name, scope, key) IN (
		SELECT name, scope, key FROM once.operations, rolled
		WHERE expires_at IS NOT NULL AND expires_at <= clock_timestamp() AND claimed_at < rolled.until
		ORDER BY expires_at LIMIT $1
		FOR UPDATE SKIP LOCKED
	) AND expires_at <= clock_timestamp() AND claimed_at < (SELECT until FROM rolled)
	RETURNING id
), checkpoints AS (
	DELETE FROM once.checkpoints c USING gone WHERE c.operation_id = gone.id
), followups AS (
	DELETE FROM once.followups f USING gone WHERE f.operation_id = gone.id AND f.state = 'delivered'
)
SELECT count(*) FROM gone`

// ReapExpired deletes the operations whose retention has passed, batch rows per statement,
// until none is left or ctx ends, and returns how many it deleted. With each it deletes its
// checkpoints and its delivered follow-ups; its ledger entries stay. An expired row is
// already ignored by claims (a retry after expiry runs as new); reaping only reclaims the
// space. Run it from a scheduled job. It rolls up the closed days first (RollUp), and
// deletes only rows claimed on a day rolled up, so the operator console's overview still
// counts the calls it deletes: a row is kept at least until RollUpMargin past the end of
// the UTC day it was claimed on, however short its retain= window.
func ReapExpired(ctx context.Context, db once.DB, batch int) (int64, error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	if batch < 0 {
		return 0, fmt.Errorf("%w: reaper: negative batch %d", dbcall.ErrInvalid, batch)
	}
	if batch == 0 {
		batch = DefaultReapBatch
	}
	if _, err := RollUp(ctx, db); err != nil {
		return 0, fmt.Errorf("once: reaper: %w", err)
	}
	var total int64
	for ctx.Err() == nil {
		var n int64
		if err := db.QueryRow(ctx, reapSQL, batch).Scan(&n); err != nil {
			return total, fmt.Errorf("once: reaper: deleted %d, then: %w", total, err)
		}
		total += n
		if n < int64(batch) {
			break
		}
	}
	return total, nil
}
