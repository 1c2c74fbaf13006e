// Package migrated gives an example's tests their database already migrated: the example's
// migrations run once per test binary, on a database that each test then gets a copy of
// (internal/pgtest's prepared databases). A test pays for a file copy, not for the
// migrations; the tests that prove the migrations themselves still start from an empty
// database.
package migrated

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
)

// Database declares a database prepared by setup: the example's Migrate, and any rows every
// test starts from. setup gets a pool that is closed after it, as a copy needs a template
// nobody is connected to. name tells an example's prepared databases apart (lower-case
// letters, digits, underscores).
//
//	var db = migrated.Database("ideas", ideas.Migrate)
//
//	func TestX(t *testing.T) { pool := db.New(t) ... }
func Database(name string, setup func(context.Context, *pgxpool.Pool) error) *pgtest.Prepared {
	return pgtest.Prepare(name, func(ctx context.Context, url string) error {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return fmt.Errorf("connecting to prepare %s: %w", name, err)
		}
		defer pool.Close()
		if err := setup(ctx, pool); err != nil {
			return fmt.Errorf("preparing %s: %w", name, err)
		}
		return nil
	})
}
