package migrated_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var setups atomic.Int32

var db = migrated.Database("orders", func(ctx context.Context, pool *pgxpool.Pool) error {
	setups.Add(1)
	_, err := pool.Exec(ctx, `CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1)`)
	return err
})

// Every test gets its own copy of the set-up database; the setup runs once.
func TestDatabase_EachTestGetsACopySetUpOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := db.New(t), db.New(t)
	if _, err := a.Exec(ctx, `INSERT INTO orders VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	var na, nb int
	if err := a.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&na); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&nb); err != nil {
		t.Fatal(err)
	}
	if na != 2 || nb != 1 {
		t.Fatalf("orders: %d in the copy written to, %d in the other; want 2 and 1", na, nb)
	}
	if got := setups.Load(); got != 1 {
		t.Fatalf("setup ran %d times, want once", got)
	}
}
