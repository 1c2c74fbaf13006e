// Package oncetest gives the tests of an app that uses once a throwaway PostgreSQL with once's
// schema applied, so a guard in a test runs against what it runs against in production.
//
// A test binary calls Main from TestMain, which removes the server it started when the tests
// end; each test then asks for its own fresh database with DB (a pgx pool), or URL (for
// database/sql, once.SQLDB, an app's own migrations):
//
//	func TestMain(m *testing.M) { os.Exit(oncetest.Main(m)) }
//
//	func TestCharge(t *testing.T) {
//		db := oncetest.DB(t)
//		...
//	}
//
// Where the server comes from:
//
//   - ONCE_TEST_DATABASE_URL (EnvURL), when set, names a server the tests may create and drop
//     databases on (a CI service container, say). Nothing is started.
//   - Otherwise the first test that asks starts a cluster of its own with the machine's
//     PostgreSQL (initdb and postgres found on PATH, by `pg_config --bindir`, or under
//     /usr/lib/postgresql/*/bin) in a temporary directory, on a free loopback port, with
//     durability off, as the server of a test is thrown away.
//
// Without a server, DB and URL skip the test and say why, except under CI=true, where they
// fail it: in CI a missing database is a broken build, not a reason to pass.
//
// Every database is a copy of one set up with once's schema step (onceschema.Migrate) the
// first time a test asks, so a test pays for a file copy, not for the migration. An app's own
// tables are its tests' to create.
//
// A unit test of code around a guard, whose effects are faked and which sends no SQL of its
// own, can use Memory instead: an in-memory stand-in for once.DB that needs no server.
package oncetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

// EnvURL names the environment variable that points the tests at a server of one's own.
const EnvURL = "ONCE_TEST_DATABASE_URL"

// Main runs the tests of m and removes the server it started, if any, when they end. It
// returns the exit code for os.Exit.
func Main(m *testing.M) int { return pgtest.Main(m) }

// migrated is the database with once's schema that every test's database is copied from.
var migrated = pgtest.Prepare("oncetest", func(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return onceschema.Migrate(ctx, conn)
})

// DB returns a pool of up to 16 connections to a fresh database of t's own, with once's
// schema applied; the pool is closed and the database dropped when t ends.
func DB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return migrated.NewDatabase(t).Pool(t, 16)
}

// URL returns the URL of a fresh database of t's own, with once's schema applied, dropped when
// t ends: for an app on database/sql (open it with pgx's stdlib driver and pass once.SQLDB)
// or a test that runs its own migrations on top.
func URL(t testing.TB) string {
	t.Helper()
	return migrated.NewDatabase(t).URL
}
