package onceops

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ErrNoClaim: no open claim has that id (it was closed already, or never existed). Nothing
// was changed.
var ErrNoClaim = errors.New("once: no such open claim")

// CloseClaim closes the open claim id of an Open guard as stale, with reason, whatever its
// holder: for a holder known to be gone before the claim's stale window has passed. The
// next claim of its key opens anew; the holder finds out at its next Finish, Fail or
// heartbeat (they change nothing). A claim that is not open is left as it is: ErrNoClaim.
func CloseClaim(ctx context.Context, db once.DB, id int64, reason string) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	if reason == "" {
		return fmt.Errorf("%w: claim %d: empty reason", dbcall.ErrInvalid, id)
	}
	tag, err := db.Exec(ctx, `UPDATE once.open_claims SET state = 'stale', closed_at = clock_timestamp(),
	reason = 'closed by an operator: ' || $2
WHERE id = $1 AND state = 'open'`, id, reason)
	if err != nil {
		return fmt.Errorf("once: closing claim %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %d", ErrNoClaim, id)
	}
	return nil
}

// Rearm ends the current episode of the Episode guard name's key, as the guard's own Rearm
// does: the next call fires again. It reports whether the latch was set.
func Rearm(ctx context.Context, db once.DB, name, key string) (bool, error) {
	return once.Episode{Name: name}.Rearm(ctx, db, key)
}

// Refund gives back n units of the Statement guard name's key, as the guard's own Refund
// does: support handing an allowance back for work the customer did not receive. Refunding
// more than the key holds is refused (ErrInvalid) and changes nothing.
func Refund(ctx context.Context, db once.DB, name, key string, n int64) error {
	return once.Statement{Name: name}.Refund(ctx, db, key, n)
}

// ResetAllowance gives back every unit the Statement guard name's key holds, and returns how
// many: the allowance starts again from zero. Units reserved by calls still running are
// given back too (their own refund then finds nothing to give back).
func ResetAllowance(ctx context.Context, db once.DB, name, key string) (int64, error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	if err := dbcall.NameKey(name, key); err != nil {
		return 0, err
	}
	tag, err := db.Exec(ctx, `DELETE FROM once.counter_slots WHERE name = $1 AND key = $2`, name, key)
	if err != nil {
		return 0, fmt.Errorf("once: statement guard %s: reset of key %q: %w", name, key, err)
	}
	return tag.RowsAffected(), nil
}

// noRows reports whether err says a query found no row.
func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
