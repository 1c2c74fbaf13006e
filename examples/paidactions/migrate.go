package paidactions

import (
	"context"
	"embed"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrations"
	once "github.com/oncekit/once/runtime"
)

// migrationFiles holds the editor's migrations in golang-migrate's layout
// (NNNN_title.up.sql and .down.sql): its own tables (0001, written by hand), then what
// oncegen wrote from the //once: directives (once's tables and the unique indexes the
// promises rely on, each CREATE UNIQUE INDEX CONCURRENTLY in a file of its own).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// tablesVersion is the migration holding the editor's own tables.
const tablesVersion = "0001_paidactions_tables"

// Migrations returns the editor's migration directory, for tools that apply it themselves.
func Migrations() fs.FS {
	dir, _ := fs.Sub(migrationFiles, "migrations") // a constant, valid path
	return dir
}

// SchemaSQL returns the DDL of the editor's own tables (its first migration): without the
// unique indexes its promises rely on, which are oncegen's migrations.
func SchemaSQL() string {
	b, _ := fs.ReadFile(Migrations(), tablesVersion+".up.sql") // embedded at build time
	return string(b)
}

// Migrate brings db up to date: each migration not applied yet, in order, recorded in
// paidactions_migrations, then onceschema.Migrate for a runtime newer than the migrations.
// Instances starting together take turns.
//
// It then proves, with once.Verify, that the database holds every index and constraint the
// app's guards rely on, valid and as generated, and fails naming each one it lacks.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	if err := migrations.Apply(ctx, db, "paidactions_migrations", Migrations()); err != nil {
		return err
	}
	return once.Verify(ctx, db)
}
