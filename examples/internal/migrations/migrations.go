// Package migrations applies an example app's migration directory to PostgreSQL: the app's
// own tables (0001, written by hand) and the files oncegen writes after them from the
// //once: declarations, each file once and in order, then the runtime's schema.
//
// A directory holds NNNN_title.up.sql files, each with its .down.sql, as oncegen writes them
// with -format migrate (golang-migrate's layout) or -format sql. Applied versions are
// recorded in a table the app names. Instances starting together take turns on a session
// advisory lock, so a second instance waits and then finds nothing left to do. (It tries
// for the lock rather than queueing for it: see takeLock.) A session lock needs a session:
// run Apply on a direct connection (or through a pooler in session mode). Behind a pooler
// in transaction mode (PgBouncer's usual set-up) the lock is taken on one server session and
// the migrations run, and the unlock goes, on others, so instances do not take turns.
//
// A file is applied together with its record, or not at all; the one exception is a file
// that builds an index CONCURRENTLY, which PostgreSQL cannot run inside a transaction. Such
// a file is run alone and recorded after it. If the process dies in between, the next run
// finds the index valid and only records it. If the build failed, it left an INVALID index
// behind, which CREATE INDEX IF NOT EXISTS would silently accept; Apply stops there instead,
// saying which index to drop.
package migrations

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// Migration is one migration: its up and down files.
type Migration struct {
	// Version is the file name without its suffix, e.g. "0003_jobs_run_id_once_forever".
	Version string
	// Up and Down are the files' SQL. Down is empty where there is no .down.sql.
	Up, Down string
	// Concurrent says the migration builds or drops an index CONCURRENTLY, so it runs
	// outside any transaction.
	Concurrent bool
}

// versionRE is what a version may look like: it is written into SQL text (see apply), so
// nothing that would need quoting.
var versionRE = regexp.MustCompile(`^[0-9]+_[a-z0-9_]+$`)

// tableRE is what the record table's name may look like, for the same reason.
var tableRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// concurrentRE finds a statement that builds or drops an index CONCURRENTLY.
var concurrentRE = regexp.MustCompile(`(?im)^\s*(CREATE\s+(UNIQUE\s+)?INDEX|DROP\s+INDEX)\s+CONCURRENTLY\b`)

// createIndexRE finds the index a concurrent build creates, and the table it is on.
var createIndexRE = regexp.MustCompile(`(?im)^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z0-9_]+)\s+ON\s+(?:ONLY\s+)?([a-z0-9_]+\.)?[a-z0-9_]+`)

// Files returns the migrations in dir, in the order they apply (by file name).
func Files(dir fs.FS) ([]Migration, error) {
	ups, err := fs.Glob(dir, "*.up.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	if len(ups) == 0 {
		return nil, errors.New("listing migrations: no *.up.sql files")
	}
	sort.Strings(ups)
	ms := make([]Migration, 0, len(ups))
	for _, up := range ups {
		version := strings.TrimSuffix(up, ".up.sql")
		if !versionRE.MatchString(version) {
			return nil, fmt.Errorf("migration %q: name it NNNN_title, in lower-case letters, digits and _", up)
		}
		u, err := fs.ReadFile(dir, up)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", version, err)
		}
		d, err := fs.ReadFile(dir, version+".down.sql")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading migration %s: %w", version, err)
		}
		ms = append(ms, Migration{Version: version, Up: string(u), Down: string(d), Concurrent: concurrentRE.MatchString(string(u))})
	}
	return ms, nil
}

// Apply brings db up to date with the migrations in dir: each one not yet recorded in table
// is applied, in order, and recorded there. Then it applies the runtime's own schema
// (onceschema.Migrate, which changes nothing where a migration already made it), so a runtime
// newer than the migrations finds its tables.
func Apply(ctx context.Context, db *pgxpool.Pool, table string, dir fs.FS) error {
	if !tableRE.MatchString(table) {
		return fmt.Errorf("migrating: table name %q: use lower-case letters, digits and _", table)
	}
	ms, err := Files(dir)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	conn, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Release()
	lock := once.LockID("examples.migrations", table)
	if err := takeLock(ctx, conn.Conn(), lock); err != nil {
		return fmt.Errorf("migrating: taking the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
	version    text        PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM `+table)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	done := map[string]bool{}
	for _, v := range applied {
		done[v] = true
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		if err := apply(ctx, conn.Conn(), table, m); err != nil {
			return fmt.Errorf("migrating: %s: %w", m.Version, err)
		}
	}
	if err := onceschema.Migrate(ctx, conn); err != nil {
		return fmt.Errorf("migrating: the runtime's schema: %w", err)
	}
	return nil
}

// takeLock takes the session advisory lock, trying again until it is free. It does not
// wait in pg_advisory_lock: a session waiting there holds a snapshot, and CREATE INDEX
// CONCURRENTLY, run by the holder, waits for every such snapshot to end, so the holder and
// the waiters would deadlock. A session between two tries holds nothing.
func takeLock(ctx context.Context, conn *pgx.Conn, lock int64) error {
	pause := 10 * time.Millisecond
	for {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&got); err != nil {
			return err
		}
		if got {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// apply applies one migration and records it.
func apply(ctx context.Context, conn *pgx.Conn, table string, m Migration) error {
	record := fmt.Sprintf("INSERT INTO %s (version) VALUES ('%s');\n", table, m.Version)
	if m.Concurrent {
		return applyConcurrent(ctx, conn, m, record)
	}
	// The record goes first and the file after it, as one query: without arguments pgx
	// sends it by the simple protocol, where PostgreSQL runs all of a query's statements
	// as one transaction. A file with its own BEGIN and COMMIT (oncegen's sql format) is
	// covered too: statements before a BEGIN are taken into the block it opens.
	if _, err := conn.Exec(ctx, record+m.Up); err != nil {
		// A file that opened its own block leaves the session in it, aborted.
		conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}

// applyConcurrent runs a migration that builds or drops an index CONCURRENTLY on its own,
// then records it.
func applyConcurrent(ctx context.Context, conn *pgx.Conn, m Migration, record string) error {
	if c := createIndexRE.FindStringSubmatch(m.Up); c != nil {
		index := c[2] + c[1] // schema-qualified as the table is
		var valid *bool
		if err := conn.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`, index).Scan(&valid); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("looking for index %s: %w", index, err)
		}
		switch {
		case valid != nil && !*valid:
			return fmt.Errorf("index %s is INVALID (an earlier build of it failed): DROP INDEX CONCURRENTLY %s, then migrate again", index, index)
		case valid != nil:
			// Built by an earlier run that died before recording it.
			_, err := conn.Exec(ctx, record)
			return err
		}
	}
	if _, err := conn.Exec(ctx, m.Up); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, record)
	return err
}
