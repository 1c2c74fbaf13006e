package outreach

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
)

// Migrations holds the app's migrations in golang-migrate's layout (NNNN_title.up.sql and
// .down.sql): 0001 is the app's own tables, written by hand; the rest are written by
// oncegen (go generate) from the //once: directives, with its snapshot beside them.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Migration is one migration file pair.
type Migration struct {
	Version  string // "0003_outreach_threads_campaign_id_creator_id_once_forever"
	Up, Down string
	// Concurrent says the migration builds an index CONCURRENTLY, which cannot run inside a
	// transaction: it is applied alone.
	Concurrent bool
}

var versionRE = regexp.MustCompile(`^[0-9]{4}_[a-z0-9_]+$`)

// LoadMigrations returns the migrations in the order they apply.
func LoadMigrations() ([]Migration, error) {
	ups, err := fs.Glob(Migrations, "migrations/*.up.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	sort.Strings(ups)
	var ms []Migration
	for _, up := range ups {
		version := strings.TrimSuffix(strings.TrimPrefix(up, "migrations/"), ".up.sql")
		if !versionRE.MatchString(version) {
			// Versions are written into SQL text (see Migrate): only plain names.
			return nil, fmt.Errorf("migration %q: name it NNNN_title in lower case, digits and _", version)
		}
		u, err := Migrations.ReadFile(up)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", version, err)
		}
		d, err := Migrations.ReadFile("migrations/" + version + ".down.sql")
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", version, err)
		}
		ms = append(ms, Migration{Version: version, Up: string(u), Down: string(d), Concurrent: strings.Contains(string(u), "INDEX CONCURRENTLY")})
	}
	return ms, nil
}

// Migrate applies the migrations db has not had yet, in order, then once's own schema
// (once.Migrate, a no-op where a migration already created it). Instances starting
// together take turns on an advisory lock.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	ms, err := LoadMigrations()
	if err != nil {
		return err
	}
	conn, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer conn.Release()
	lock := once.LockID("outreach.migrate", "")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return fmt.Errorf("migrating: taking the lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS outreach_migrations (
		version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	for _, m := range ms {
		var done bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM outreach_migrations WHERE version = $1)`, m.Version).Scan(&done); err != nil {
			return fmt.Errorf("migration %s: %w", m.Version, err)
		}
		if done {
			continue
		}
		record := fmt.Sprintf("INSERT INTO outreach_migrations (version) VALUES ('%s')", m.Version)
		if m.Concurrent {
			// Alone, outside any transaction; recorded after it succeeds. If it fails it
			// leaves an INVALID index: drop it and start again (the file says so too).
			if _, err := conn.Exec(ctx, m.Up); err != nil {
				return fmt.Errorf("migration %s: %w", m.Version, err)
			}
			if _, err := conn.Exec(ctx, record); err != nil {
				return fmt.Errorf("migration %s: %w", m.Version, err)
			}
			continue
		}
		// Without arguments pgx sends the simple protocol, whose multi-statement query
		// PostgreSQL runs as one transaction: the migration and its record commit together.
		if _, err := conn.Exec(ctx, m.Up+";\n"+record); err != nil {
			return fmt.Errorf("migration %s: %w", m.Version, err)
		}
	}
	if err := once.Migrate(ctx, db); err != nil {
		return fmt.Errorf("migrating once's schema: %w", err)
	}
	return nil
}
