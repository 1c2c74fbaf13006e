package once

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed schema/*.sql
var schemaFiles embed.FS

// Schema is the DDL of the runtime's own tables, in the PostgreSQL schema "once". It is
// idempotent (every statement is IF NOT EXISTS), so applying it twice changes nothing.
// oncegen writes it into a migration for review; Migrate applies it directly.
var Schema = loadSchema()

func loadSchema() string {
	names, err := fs.Glob(schemaFiles, "schema/*.sql")
	if err != nil {
		panic(err) // the pattern is a constant: it cannot be malformed
	}
	var b strings.Builder
	for _, name := range names { // fs.Glob returns names sorted, so the order is fixed
		text, err := schemaFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot fail to read
		}
		b.Write(text)
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Migrate applies Schema in one transaction. Concurrent callers (several instances starting
// at once) serialise on an advisory lock, so none of them fails on a half-created table.
func Migrate(ctx context.Context, db DB) error {
	if err := checkDB(db); err != nil {
		return err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("once: migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", LockID("once.schema", "migrate")); err != nil {
		return fmt.Errorf("once: migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, Schema); err != nil {
		return fmt.Errorf("once: migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("once: migrate: commit: %w", err)
	}
	return nil
}
