package reports

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

// migrations are the app's schema (0001, written by hand) and the constraints its guards
// rely on with once's own tables (the rest, written by oncegen for review), in
// golang-migrate's layout: NNNN_title.up.sql and .down.sql.
//
//go:embed migrations/*.sql
var migrations embed.FS

// concurrentIndex finds the index a CREATE INDEX CONCURRENTLY migration builds.
var concurrentIndex = regexp.MustCompile(`(?i)CREATE\s+UNIQUE\s+INDEX\s+CONCURRENTLY\s+("?[a-z0-9_]+"?)`)

// Migrate brings the database up to the app's migrations, then applies once's schema (so
// a newer runtime's tables exist even before oncegen wrote them into a migration). Several
// instances starting at once take turns on an advisory lock.
//
// Each migration is applied with its record in report_schema_migrations in one
// transaction, except an index built CONCURRENTLY, which cannot run in one: it is applied
// alone, and a build found done but unrecorded (the process died in between) is recorded,
// while an INVALID one (the build failed) stops the migration with what to do.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Release()
	lock := once.LockID("reports.migrate", "schema")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS report_schema_migrations (
	version    text        PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	ups, err := fs.Glob(migrations, "migrations/*.up.sql")
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	sort.Strings(ups)
	for _, path := range ups {
		version := strings.TrimSuffix(strings.TrimPrefix(path, "migrations/"), ".up.sql")
		var done bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM report_schema_migrations WHERE version = $1)`, version).Scan(&done); err != nil {
			return fmt.Errorf("migrating %s: %w", version, err)
		}
		if done {
			continue
		}
		sql, err := migrations.ReadFile(path)
		if err != nil {
			return fmt.Errorf("migrating %s: %w", version, err)
		}
		if m := concurrentIndex.FindStringSubmatch(string(sql)); m != nil {
			err = applyConcurrent(ctx, conn, string(sql), strings.Trim(m[1], `"`))
			if err == nil {
				_, err = conn.Exec(ctx, `INSERT INTO report_schema_migrations (version) VALUES ($1)`, version)
			}
		} else {
			err = applyInTx(ctx, pool, string(sql), version)
		}
		if err != nil {
			return fmt.Errorf("migrating %s: %w", version, err)
		}
	}
	return once.Migrate(ctx, pool)
}

func applyInTx(ctx context.Context, pool *pgxpool.Pool, sql, version string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	// No arguments: pgx sends the file by the simple protocol, all its statements at once.
	if _, err := tx.Exec(ctx, sql); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO report_schema_migrations (version) VALUES ($1)`, version); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func applyConcurrent(ctx context.Context, conn *pgxpool.Conn, sql, index string) error {
	_, err := conn.Exec(ctx, sql)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P07" { // 42P07: the index exists already
		return err
	}
	var valid bool
	if err := conn.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname = $1`, index).Scan(&valid); err != nil {
		return fmt.Errorf("index %s exists but cannot be checked: %w", index, err)
	}
	if !valid {
		return fmt.Errorf("index %s is INVALID (an earlier build failed): DROP INDEX CONCURRENTLY %s, then migrate again", index, index)
	}
	return nil
}
