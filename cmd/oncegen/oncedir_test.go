package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// With -once-migrations, once's own schema (its tables) goes to a directory of its own,
// numbered on its own, and the migrations directory holds only what the app's schema gains
// (the table= constraints) and the snapshot: a tool that reads it for the app's tables
// (sqlc, an ORM) never sees once's. Both applied as two sets, verify passes; a new guard's
// constraint lands in the migrations directory alone, and -check reads the same split from
// the //go:generate line.
func TestMigrations_OnceSchemaInADirectoryOfItsOwn(t *testing.T) {
	t.Parallel()
	const line = "package e2e\n\n//go:generate go tool oncegen -migrations db/migrations -once-migrations db/once -format sql\n"
	mod := newModule(t, map[string]string{
		"gen.go":     line,
		"app/app.go": appSrc,
		"schema.sql": "CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL);\nCREATE TABLE charges (order_id text NOT NULL);\n",
	})
	args := []string{"-migrations", "db/migrations", "-once-migrations", "db/once", "-format", "sql", "./..."}
	if code, _, stderr := oncegen(t, mod, args...); code != 0 {
		t.Fatalf("oncegen: exit %d\n%s", code, stderr)
	}
	app, onceDir := filepath.Join(mod, "db", "migrations"), filepath.Join(mod, "db", "once")
	list := func(dir string) []string {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	appFiles, onceFiles := list(app), list(onceDir)
	if want := []string{"0001_jobs_dedupe_key_once_open.down.sql", "0001_jobs_dedupe_key_once_open.up.sql", "oncegen.snapshot.json"}; strings.Join(appFiles, " ") != strings.Join(want, " ") {
		t.Errorf("the migrations directory holds %v, want the app's constraint and the snapshot: %v", appFiles, want)
	}
	if want := stepFiles(".down.sql", ".up.sql"); strings.Join(onceFiles, " ") != strings.Join(want, " ") {
		t.Errorf("once's directory holds %v, want once's schema steps from 0001: %v", onceFiles, want)
	}
	for _, f := range filesWith(t, app, ".sql") {
		b, _ := os.ReadFile(f)
		if s := strings.ToUpper(string(b)); strings.Contains(s, "CREATE TABLE") || strings.Contains(s, "CREATE SCHEMA") {
			t.Errorf("%s creates a table or schema: a tool reading the migrations directory would model it:\n%s", f, b)
		}
	}

	// Two sets, applied one after the other: verify finds everything.
	db := pgtest.NewDatabase(t)
	if out, err := psql(db.URL, filepath.Join(mod, "schema.sql")); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, dir := range []string{onceDir, app} {
		for _, f := range filesWith(t, dir, ".up.sql") {
			if out, err := psql(db.URL, f); err != nil {
				t.Fatalf("%s: %v\n%s", f, err, out)
			}
		}
	}
	if code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL); code != 0 {
		t.Fatalf("verify after both sets: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := oncegen(t, mod, "-check"); code != 0 {
		t.Fatalf("-check reading the //go:generate line: exit %d\n%s%s", code, stdout, stderr)
	}

	// A new table= guard: its constraint follows in the migrations directory; once's is
	// left as it is.
	more := appSrc + `
// Record records an order once for ever.
//
//once:forever table=charges columns=order_id
func Record(ctx context.Context, tx pgx.Tx, order string) error { return nil }
`
	if err := os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := oncegen(t, mod, "-check"); code != 1 || !strings.Contains(stdout, "b/db/migrations/0002_charges_order_id_once_forever.up.sql") {
		t.Fatalf("-check with a new guard: exit %d, want 1 with the new file due\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := oncegen(t, mod, args...); code != 0 {
		t.Fatalf("oncegen: exit %d\n%s", code, stderr)
	}
	if got := list(onceDir); strings.Join(got, " ") != strings.Join(onceFiles, " ") {
		t.Errorf("once's directory changed with an app's guard: %v", got)
	}
	added := filesWith(t, app, "0002_charges_order_id_once_forever.up.sql")
	if len(added) != 1 {
		t.Fatalf("the new constraint's file: %v (directory: %v)", added, list(app))
	}
	if out, err := psql(db.URL, added[0]); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL); code != 0 {
		t.Fatalf("verify after the new constraint: exit %d\n%s%s", code, stdout, stderr)
	}

	// -once-migrations alone is bad input.
	if code, _, stderr := oncegen(t, mod, "-once-migrations", "db/once"); code != 2 || !strings.Contains(stderr, "-once-migrations db/once needs -migrations") {
		t.Errorf("-once-migrations without -migrations: exit %d\n%s", code, stderr)
	}
}
