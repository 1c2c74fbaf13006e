package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/squawk"
	once "github.com/oncekit/once/runtime"
)

// Growing the runtime's schema by one step yields one new migration holding only that step
// (with its record and the file's timeouts), in every format, and squawk finds nothing in it.
// Not parallel: it grows the steps for its duration.
func TestSchemaStep_OneNewStepIsOneNewFile(t *testing.T) {
	extra := once.SchemaStep{Number: once.LatestSchemaStep() + 1, Name: "operations_note",
		Up:   "ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS note text NULL;\n",
		Down: "-- note holds operators' words: kept.\n"}
	for _, format := range Formats {
		dir := t.TempDir()
		write := func() []string {
			t.Helper()
			objs, err := ObjectsWith(nil, Options{})
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
			files, err := MigrationFiles(dir, format, plan, Options{})
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
		schemaSteps = func() []once.SchemaStep { return append(once.SchemaSteps(), extra) }
		added := write()
		schemaSteps = once.SchemaSteps
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
