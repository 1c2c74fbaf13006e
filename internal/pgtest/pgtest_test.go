package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestNew_GivesEachTestItsOwnEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if a.Name == b.Name {
		t.Fatalf("two tests share database %s", a.Name)
	}
	pa, pb := a.Pool(t, 2), b.Pool(t, 2)
	if _, err := pa.Exec(ctx, "CREATE TABLE marks (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := pa.Exec(ctx, "INSERT INTO marks VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'marks'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %s sees a table created in %s", b.Name, a.Name)
	}
	var version int
	if err := pa.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 150000 {
		t.Fatalf("server version %d, want PostgreSQL 15 or later", version)
	}
}

func TestNewDatabase_IsDroppedWhenTheTestEnds(t *testing.T) {
	t.Parallel()
	var name string
	admin := pgtest.NewDatabase(t).Pool(t, 1)
	t.Run("inner", func(t *testing.T) {
		name = pgtest.NewDatabase(t).Name
	})
	var n int
	if err := admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %s still exists after its test ended", name)
	}
}
