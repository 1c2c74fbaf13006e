package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/generator"
)

// In every format, with Options.OnceDir, once's schema steps are written there, numbered
// from 1 on their own, and the migrations directory gets the table= files, numbered from 1
// too, and the snapshot; for atlas, each directory's atlas.sum covers its own files alone.
// Without it, one directory holds both, in one sequence.
func TestMigrationFiles_OnceDirHoldsOnceSchemaAlone(t *testing.T) {
	t.Parallel()
	guards := load(t, generator.LoadConfig{Dir: root(t), Patterns: []string{"./testdata/generate/tables"}}).Guards
	for _, format := range generator.Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			app, once := filepath.Join(base, "migrations"), filepath.Join(base, "once")
			objs, err := generator.ObjectsWith(guards, generator.Options{OnceDir: once})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := generator.Diff(generator.Snapshot{Version: 1}, guards, objs, false)
			if err != nil {
				t.Fatal(err)
			}
			files, err := generator.MigrationFiles(app, format, plan, generator.Options{OnceDir: once})
			if err != nil {
				t.Fatal(err)
			}
			if err := generator.WriteMigrations(app, files); err != nil {
				t.Fatal(err)
			}
			for dir, wantOnce := range map[string]bool{app: false, once: true} {
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				sqls := 0
				for _, e := range entries {
					name := e.Name()
					if !strings.HasSuffix(name, ".sql") {
						continue
					}
					sqls++
					if isOnce := strings.Contains(name, "_once_schema_"); isOnce != wantOnce {
						t.Errorf("%s in %s", name, dir)
					}
					if sqls == 1 && !strings.HasPrefix(name, "0001_") {
						t.Errorf("%s's first file is %s: want it numbered from 0001", dir, name)
					}
				}
				if sqls == 0 {
					t.Errorf("%s holds no migration", dir)
				}
				_, err = os.Stat(filepath.Join(dir, generator.SnapshotFile))
				if hasSnap := err == nil; hasSnap == wantOnce {
					t.Errorf("%s: snapshot present %t", dir, hasSnap)
				}
				if format != "atlas" {
					continue
				}
				sum, err := os.ReadFile(filepath.Join(dir, "atlas.sum"))
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				if got := strings.Count(string(sum), "\n") - 1; got != sqls {
					t.Errorf("%s's atlas.sum lists %d files, want its own %d:\n%s", dir, got, sqls, sum)
				}
			}
		})
	}
}
