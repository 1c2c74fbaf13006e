package outreach

import (
	"context"
	"embed"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrations"
	once "github.com/oncekit/once/runtime"
)

// migrationFiles holds the app's migrations in golang-migrate's layout (NNNN_title.up.sql
// and .down.sql): 0001 is the app's own tables, written by hand; the rest are written by
// oncegen (go generate) from the //once: directives, with its snapshot beside them.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the app's migration directory, for tools that apply it themselves.
func Migrations() fs.FS {
	dir, _ := fs.Sub(migrationFiles, "migrations") // a constant, valid path
	return dir
}

// Migrate brings db up to date: each migration not applied yet, in order, recorded in
// outreach_migrations, then once's own schema (onceschema.Migrate, a no-op where a migration
// already created it). Instances starting together take turns.
//
// It then proves, with once.Verify, that the database holds every index and constraint the
// app's guards rely on, valid and as generated, and fails naming each one it lacks.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	if err := migrations.Apply(ctx, db, "outreach_migrations", Migrations()); err != nil {
		return err
	}
	return once.Verify(ctx, db)
}
