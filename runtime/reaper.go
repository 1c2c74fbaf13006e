package once

import (
	"context"
	"fmt"
)

// DefaultReapBatch is how many expired operations one reaper statement deletes when the batch
// given is zero.
const DefaultReapBatch = 1000

// reapSQL deletes one batch of expired operations (and, by cascade, their checkpoints). Small
// batches keep each statement's locks and WAL short, so reaping a backlog never stalls the
// claims running beside it; SKIP LOCKED steps around a row a claim is forgetting right now.
// Ledger entries and follow-ups stay: they are records of work that happened.
const reapSQL = `DELETE FROM once.operations WHERE id IN (
	SELECT id FROM once.operations
	WHERE expires_at IS NOT NULL AND expires_at <= clock_timestamp()
	ORDER BY expires_at LIMIT $1
	FOR UPDATE SKIP LOCKED
)`

// ReapExpired deletes the operations whose retention has passed, batch rows per statement,
// until none is left or ctx ends, and returns how many it deleted. An expired row is already
// ignored by claims (a retry after expiry runs as new); reaping only reclaims the space. Run
// it from a scheduled job.
func ReapExpired(ctx context.Context, db DB, batch int) (int64, error) {
	if err := checkContext(ctx); err != nil {
		return 0, err
	}
	if err := checkDB(db); err != nil {
		return 0, err
	}
	if batch < 0 {
		return 0, fmt.Errorf("%w: reaper: negative batch %d", ErrInvalid, batch)
	}
	if batch == 0 {
		batch = DefaultReapBatch
	}
	var total int64
	for ctx.Err() == nil {
		tag, err := db.Exec(ctx, reapSQL, batch)
		if err != nil {
			return total, fmt.Errorf("once: reaper: deleted %d, then: %w", total, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	return total, nil
}
