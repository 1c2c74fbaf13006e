// Package pgtest gives tests a real, throwaway PostgreSQL.
//
// A test binary calls Main from TestMain; each test then asks for its own fresh database with
// New (a pool) or NewDatabase (a URL, for child processes, psql or migration tools):
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		pool := pgtest.New(t)
//		...
//	}
//
// Where the server comes from:
//
//   - ONCE_TEST_DATABASE_URL, when set, names a server the tests may create and drop databases
//     on. Nothing is started.
//   - Otherwise Main finds initdb and postgres (PATH, `pg_config --bindir`,
//     /usr/lib/postgresql/*/bin), initialises a cluster in a temporary directory, starts it on a
//     free loopback port with durability turned off (fsync, synchronous_commit: a test cluster is
//     thrown away), and removes it when the tests end. When running as root the cluster runs as
//     the postgres user, as PostgreSQL refuses to run as root.
//
// The server process is started with a parent-death signal, so a test binary that panics or is
// killed takes its cluster with it; a directory left behind that way is removed by the next
// run. Every test database is a copy of an empty template, so making one costs a few
// milliseconds.
//
// Production sits behind a pooler and a standby, so both are part of the harness:
//
//   - ONCE_TEST_PGBOUNCER=exec (or simple_protocol, cache_describe, ...) starts PgBouncer in
//     transaction pooling mode in front of the server and routes every test database's URL
//     through it, asking pgx for that query exec mode; Database.DirectURL still reaches the
//     server. NewPooledDatabase gives one test a pooled database whatever the variable says.
//   - NewReplicated starts a primary and a streaming standby of its own (pg_basebackup, a
//     replication slot, synchronous or not), whose stream a test can cut before it kills the
//     primary and promotes the standby.
//
// Without PostgreSQL, New and NewDatabase skip the test and say why — except when CI=true,
// where they fail it: in CI a missing database is a broken build, not a reason to pass.
package pgtest
