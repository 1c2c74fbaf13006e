package onceschema_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster; each test then takes
// its own fresh database from it.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// setup gives a test its own database, with the runtime's schema, and a pool of up to conns
// connections.
func setup(t testing.TB, conns int) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.NewDatabase(t).Pool(t, conns)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}
