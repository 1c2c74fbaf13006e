package onceops

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// sweepStaleSQL closes every open claim of a guard that has shown no life for its own stale
// window (stale_after, the window of the guard that made it), as a later claim of its key
// would (once.Open).
const sweepStaleSQL = `UPDATE once.open_claims
SET state = 'stale', closed_at = clock_timestamp(), reason = 'no sign of life for longer than the stale window (' || stale_after || ')'
WHERE name = $1 AND state = 'open' AND alive_at + stale_after <= clock_timestamp()`

// SweepStale closes as stale every open claim of the Open guard name whose holder has shown
// no life for the claim's stale window, and returns how many it closed. Claims close
// themselves this way whenever their key is claimed again; a sweep (at start-up, on a timer,
// from an operator) also closes those on keys nobody asks for again, so that reports of open
// work are true.
func SweepStale(ctx context.Context, db once.DB, name string) (closed int64, err error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	if err := dbcall.Name(name); err != nil {
		return 0, err
	}
	tag, err := db.Exec(ctx, sweepStaleSQL, name)
	if err != nil {
		return 0, fmt.Errorf("once: open guard %s: sweep: %w", name, err)
	}
	return tag.RowsAffected(), nil
}
