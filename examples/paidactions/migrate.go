package paidactions

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

//go:embed schema.sql
var schemaSQL string

// SchemaSQL returns the DDL of the editor's own tables (schema.sql): without the unique
// indexes its promises rely on, which are oncegen's migrations.
func SchemaSQL() string { return schemaSQL }

// migrations are the files oncegen wrote: once's own tables, then the unique indexes the
// //once: directives rely on, each CREATE UNIQUE INDEX CONCURRENTLY in a file of its own.
//
//go:embed migrations/*.up.sql
var migrations embed.FS

// Migrate brings the database up to date: the editor's tables (schema.sql, idempotent),
// then every oncegen migration not yet applied (recorded in paidactions_migrations), then
// once.Migrate for a runtime newer than the migrations. Instances starting together take
// turns on an advisory lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	lock := once.LockID("paidactions.migrate", "")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("migrate: taking the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)

	if _, err := conn.Exec(ctx, schemaSQL); err != nil {
		return fmt.Errorf("migrate: schema.sql: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS paidactions_migrations (
	name       text        PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.up.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		var done bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paidactions_migrations WHERE name = $1)`, name).Scan(&done); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if done {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		// Each file is sent as it is, by the simple protocol: the transactional ones hold
		// their own BEGIN and COMMIT, and a CREATE INDEX CONCURRENTLY must run outside any.
		if _, err := conn.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("migrate: %s: %w", strings.TrimPrefix(name, "migrations/"), err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO paidactions_migrations (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, name); err != nil {
			return fmt.Errorf("migrate: recording %s: %w", name, err)
		}
	}
	if err := once.Migrate(ctx, conn); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
