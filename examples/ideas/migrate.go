package ideas

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

// migrations holds the app's migrations: its own tables (0001), then what oncegen wrote
// from the //once: declarations (the runtime's tables and the indexes the promises rely on).
//
//go:embed migrations/*.up.sql
var migrations embed.FS

// Migrate brings db up to date: it applies each migration not applied yet, in order, and
// records it in ideas_migrations, then applies the runtime's schema (once.Migrate, which is
// idempotent). Instances starting together take turns on a session advisory lock. A
// migration is applied as written: the files oncegen writes for CREATE UNIQUE INDEX
// CONCURRENTLY hold that one statement and no transaction, as PostgreSQL requires.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	conn, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Release()
	lock := once.LockID("ideas.migrate", "")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("migrating: taking the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS ideas_migrations (
		version    text        PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.up.sql")
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".up.sql")
		var done bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ideas_migrations WHERE version = $1)`, version).Scan(&done); err != nil {
			return fmt.Errorf("migrating: %w", err)
		}
		if done {
			continue
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrating: %w", err)
		}
		// No arguments: pgx sends the file with the simple protocol, every statement in it.
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("migrating: applying %s: %w", name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO ideas_migrations (version) VALUES ($1)`, version); err != nil {
			return fmt.Errorf("migrating: recording %s: %w", name, err)
		}
	}
	if err := once.Migrate(ctx, conn); err != nil {
		return fmt.Errorf("migrating: the runtime's schema: %w", err)
	}
	return nil
}
