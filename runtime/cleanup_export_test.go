package once

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// BehindPooler reports whether conn reaches its server through a pooler that hides the
// server's process id, as the clean-up of an unseen claim judges it.
func BehindPooler(ctx context.Context, conn *pgx.Conn) (bool, error) { return behindPooler(ctx, conn) }

// OpenClaimSQL is an Open guard's claim ($1 name, $2 key, $3 token, $4 stale window in µs).
const OpenClaimSQL = claimSQL

// RecheckOpen repeats the withdrawal of the open claim under token, as the clean-up does
// behind a pooler after a first withdrawal found nothing, at the given delays (the
// clean-up's own when nil), and reports whether a repeat found the claim.
func RecheckOpen(ctx context.Context, db DB, name, key, token string, at []time.Duration) (bool, error) {
	if at == nil {
		at = lateRechecks[:]
	}
	withdraw, found := withdrawOpen(name, key, token), false
	err := recheck(ctx, db, func(ctx context.Context, db DB) (bool, error) {
		ok, err := withdraw(ctx, db)
		found = found || ok
		return ok, err
	}, at)
	return found, err
}
