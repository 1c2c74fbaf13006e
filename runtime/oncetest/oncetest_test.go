package oncetest_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
	"github.com/oncekit/once/runtime/oncetest"
)

func TestMain(m *testing.M) { os.Exit(oncetest.Main(m)) }

// A database from DB holds once's schema as Verify expects it, and a guard on it runs once:
// the second call of a key is a duplicate, and the row is in once.operations.
func TestDBRunsAGuardOnce(t *testing.T) {
	db := oncetest.DB(t)
	ctx := context.Background()
	if err := onceschema.Verify(ctx, db); err != nil {
		t.Fatalf("verify: %v", err)
	}
	g := once.Forever{Name: "app.Charge"}
	runs := 0
	for i, want := range []once.Status{once.Ran, once.Duplicate} {
		out, err := g.Do(ctx, db, once.Ref{Key: "order/1"}, func(context.Context) error { runs++; return nil })
		if err != nil || out.Status != want {
			t.Fatalf("call %d: %v, %v; want %v", i+1, out.Status, err, want)
		}
	}
	if runs != 1 {
		t.Errorf("the function ran %d times, want 1", runs)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = $1 AND state = 'done'`, g.Name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d done operations, want 1", n)
	}
}

// Two tests' databases are two databases: what one records the other does not see.
func TestDBIsFreshPerTest(t *testing.T) {
	for i := range 2 {
		t.Run("", func(t *testing.T) {
			db := oncetest.DB(t)
			var n int
			if err := db.QueryRow(context.Background(), `SELECT count(*) FROM once.operations`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("database %d starts with %d operations, want 0", i+1, n)
			}
			if _, err := (once.Forever{Name: "app.Charge"}).Do(context.Background(), db, once.Ref{Key: "k"}, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// URL serves an app on database/sql: pgx's stdlib driver and once.SQLDB on it.
func TestURLServesDatabaseSQL(t *testing.T) {
	sqldb, err := sql.Open("pgx", oncetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	db := once.SQLDB(sqldb)
	if err := onceschema.Verify(context.Background(), db); err != nil {
		t.Fatalf("verify: %v", err)
	}
	out, err := (once.Forever{Name: "app.Charge"}).Do(context.Background(), db, once.Ref{Key: "k"}, func(context.Context) error { return nil })
	if err != nil || out.Status != once.Ran {
		t.Fatalf("%v, %v; want ran", out.Status, err)
	}
}

// EnvURL is the variable the harness reads.
func TestEnvURLIsTheHarnessOwn(t *testing.T) {
	if oncetest.EnvURL != pgtest.EnvURL {
		t.Fatalf("EnvURL %q, but the harness reads %q", oncetest.EnvURL, pgtest.EnvURL)
	}
}
