package onceops

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ForceRelease releases the key's lease of the Lease guard name, whoever holds it: for a
// holder known to be gone when waiting for the TTL is not acceptable. The holder finds out
// at its next Release or Extend (once.ErrNotOwner). Releasing a free lease does nothing.
func ForceRelease(ctx context.Context, db once.DB, name, key string) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	if err := dbcall.NameKey(name, key); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `UPDATE once.leases SET released_at = clock_timestamp(), released_by = 'operator'
WHERE name = $1 AND key = $2 AND released_at IS NULL`, name, key); err != nil {
		return fmt.Errorf("once: lease guard %s: force release: %w", name, err)
	}
	return nil
}
