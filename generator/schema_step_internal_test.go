package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/squawk"
	"github.com/oncekit/once/runtime/onceschema"
)

// Growing the runtime's schema by one step yields one new migration holding only that step
// (with its record and the file's timeouts), in every format, and squawk finds nothing in it.
// Not parallel: it grows the steps for its duration.
func TestSchemaStep_OneNewStepIsOneNewFile(t *testing.T) {
	extra := onceschema.Step{Number: onceschema.LatestStep() + 1, Name: "operations_note",
		Up:   "ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS note text NULL;\n",
		Down: "-- note holds operators' words: kept.\n"}
	for _, format := range Formats {
		dir := t.TempDir()
		write := func() []string {
			t.Helper()
			files, err := dueFiles(t, dir, format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteMigrations(dir, files); err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range files {
				if n != SnapshotFile && n != atlasSumFile {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			return names
		}
		write()
		schemaSteps = func() []onceschema.Step { return append(onceschema.Steps(), extra) }
		added := write()
		schemaSteps = onceschema.Steps
		// A fresh directory holds one file per step before it, so the new step's file takes
		// the step's own number.
		base := fmt.Sprintf("%04d_once_schema_%04d_operations_note", extra.Number, extra.Number)
		want := []string{base + ".up.sql", base + ".down.sql"}
		if format == "goose" || format == "atlas" {
			want = []string{base + ".sql"}
		}
		slices.Sort(want)
		if !slices.Equal(added, want) {
			t.Fatalf("-format %s: a new step wrote %v, want %v", format, added, want)
		}
		up, err := os.ReadFile(filepath.Join(dir, added[len(added)-1]))
		if err != nil {
			t.Fatal(err)
		}
		text := string(up)
		if !strings.Contains(text, extra.Up) || !strings.Contains(text, extra.RecordSQL()) ||
			strings.Contains(text, "CREATE TABLE") || !strings.Contains(text, "lock_timeout") {
			t.Errorf("-format %s: the new step's file:\n%s", format, text)
		}
		for _, f := range squawk.Check(t, format != "sql", filepath.Join(dir, added[len(added)-1])) {
			t.Errorf("-format %s: %s", format, f)
		}
		if again := write(); len(again) != 0 {
			t.Errorf("-format %s: a run after the new step wrote %v", format, again)
		}
	}
}

// A new database's migrations hold the runtime's schema in exactly one file (beside the
// application's table= files), and the snapshot records the step by its name and the hash of
// what was emitted, not its statements again: a reviewer reads the statements in the file.
func TestSchemaStep_ANewDatabaseGetsOneRuntimeFile(t *testing.T) {
	t.Parallel()
	for _, format := range Formats {
		dir := t.TempDir()
		files, err := dueFiles(t, dir, format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var runtime []string
		for n := range files {
			if strings.Contains(n, "_once_schema_") {
				runtime = append(runtime, n)
			}
		}
		want := 2 // up and down
		if format == "goose" || format == "atlas" {
			want = 1
		}
		if len(runtime) != want {
			t.Errorf("-format %s: runtime schema files %v, want one step's", format, runtime)
		}
		snap := string(files[SnapshotFile])
		step := onceschema.Steps()[0]
		if strings.Contains(snap, "CREATE TABLE") || !strings.Contains(snap, `"name": "`+step.Name+`"`) || !strings.Contains(snap, `"sha256": "`) {
			t.Errorf("-format %s: the snapshot does not hold the step's name and hash alone:\n%s", format, snap)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dueFiles returns the migration files dir is due for with no guards declared: the
// runtime's steps alone, as schemaSteps has them.
func dueFiles(t *testing.T, dir, format string, opts Options) (map[string][]byte, error) {
	t.Helper()
	objs, err := ObjectsWith(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Diff(snap, nil, objs, false)
	if err != nil {
		t.Fatal(err)
	}
	return MigrationFiles(dir, format, plan, opts)
}
