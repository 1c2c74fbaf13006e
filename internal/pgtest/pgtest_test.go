package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

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

var withMarks = pgtest.Prepare("marks", func(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE TABLE marks (id int PRIMARY KEY); INSERT INTO marks VALUES (1), (2)")
	return err
})

func TestPrepared_EachTestGetsItsOwnCopyOfTheSetUpDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := withMarks.New(t), withMarks.New(t)
	if _, err := a.Exec(ctx, "INSERT INTO marks VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	var na, nb int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM marks").Scan(&na); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM marks").Scan(&nb); err != nil {
		t.Fatal(err)
	}
	if na != 3 || nb != 2 {
		t.Fatalf("rows = %d and %d, want 3 in the copy written to and 2 in the other", na, nb)
	}
}
