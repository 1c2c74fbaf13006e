package generator

import (
	"fmt"
	"maps"
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

// A runtime step mended after release (see Amendment) is mended in the file oncegen wrote it
// into, in every format: the step's statements are replaced, and every other line (the
// timeouts the file was written with, the tool's annotations, the down part) stays. A run
// after that writes nothing; a file edited by hand since is an error naming it, and a
// directory whose file is gone gets the snapshot alone. Not parallel: it changes the steps.
func TestSchemaStep_AnAmendedStepIsMendedInItsFile(t *testing.T) {
	released := once.SchemaStep{Number: once.LatestSchemaStep() + 1, Name: "operations_note",
		Up:   "ALTER TABLE once.operations ADD COLUMN IF NOT EXISTS note text NULL;\n",
		Down: "-- note holds operators' words: kept.\n"}
	mended := released
	mended.Up = "-- note is NULL where no operator wrote one.\nALTER TABLE once.operations ADD COLUMN IF NOT EXISTS note text NULL;\n"
	mended.Superseded = []string{released.Up}
	defer func() { schemaSteps = once.SchemaSteps }()
	with := func(s once.SchemaStep) {
		schemaSteps = func() []once.SchemaStep { return append(once.SchemaSteps(), s) }
	}
	write := func(t *testing.T, dir, format string, opts Options) []string {
		t.Helper()
		fs, err := dueFiles(t, dir, format, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteMigrations(dir, fs); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(fs))
	}
	base := fmt.Sprintf("%04d_once_schema_%04d_operations_note", released.Number, released.Number)
	for _, format := range Formats {
		up := base + ".up.sql"
		if format == "goose" || format == "atlas" {
			up = base + ".sql"
		}
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{LockTimeout: "2s"})
			before := read(t, filepath.Join(dir, up))

			with(mended)
			written := write(t, dir, format, Options{})
			want := []string{up, SnapshotFile}
			if format == "atlas" {
				want = []string{up, atlasSumFile, SnapshotFile}
			}
			slices.Sort(want)
			if !slices.Equal(written, want) {
				t.Fatalf("the amended step wrote %v, want %v", written, want)
			}
			after := read(t, filepath.Join(dir, up))
			if wantText := strings.Replace(before, released.Up, mended.Up, 1); after != wantText || after == before {
				t.Errorf("the amended file:\n%s\nwant the file as written with the step's statements replaced:\n%s", after, wantText)
			}
			if !strings.Contains(after, "lock_timeout = '2s'") {
				t.Errorf("the amended file lost the timeout it was written with:\n%s", after)
			}
			if format == "atlas" {
				sum, err := atlasSum(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, filepath.Join(dir, atlasSumFile)); got != string(sum) {
					t.Errorf("atlas.sum after the amendment:\n%s\nwant the directory's:\n%s", got, sum)
				}
			}
			if again := write(t, dir, format, Options{}); len(again) != 0 {
				t.Errorf("a run after the amendment wrote %v", again)
			}
		})
		t.Run(format+"/edited by hand", func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{})
			path := filepath.Join(dir, up)
			edited := strings.Replace(read(t, path), "note text NULL", "note varchar(200) NULL", 1)
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			with(mended)
			_, err := dueFiles(t, dir, format, Options{})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "amended") {
				t.Fatalf("an amended step whose file was edited by hand: %v, want an error naming %s", err, path)
			}
			if read(t, path) != edited {
				t.Errorf("the file edited by hand was changed")
			}
		})
		// The mended file was written but the snapshot was not (a run stopped between the
		// two, or a checkout that took the old snapshot alone): the file is left as it is,
		// though the new statements hold the old ones.
		t.Run(format+"/snapshot behind its file", func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{})
			oldSnap := read(t, filepath.Join(dir, SnapshotFile))
			with(mended)
			write(t, dir, format, Options{})
			want := read(t, filepath.Join(dir, up))
			if err := os.WriteFile(filepath.Join(dir, SnapshotFile), []byte(oldSnap), 0o644); err != nil {
				t.Fatal(err)
			}
			written := write(t, dir, format, Options{})
			if got := read(t, filepath.Join(dir, up)); got != want {
				t.Errorf("a run with the snapshot behind its mended file wrote %v; the file:\n%s\nwant it as mended:\n%s", written, got, want)
			}
		})
		// A file mended by hand before oncegen came to it, in an editor that wrote CRLF line
		// ends: it counts as mended, and is left as it is.
		t.Run(format+"/mended by hand with CRLF", func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{})
			path := filepath.Join(dir, up)
			byHand := strings.ReplaceAll(strings.Replace(read(t, path), released.Up, mended.Up, 1), "\n", "\r\n")
			if err := os.WriteFile(path, []byte(byHand), 0o644); err != nil {
				t.Fatal(err)
			}
			with(mended)
			written := write(t, dir, format, Options{})
			if read(t, path) != byHand || slices.Contains(written, up) {
				t.Errorf("a file mended by hand was written again (%v)", written)
			}
		})
		// An older oncegen (a step's text it does not know in the snapshot) takes no mend
		// back: it writes nothing, and the file and the snapshot stay mended.
		t.Run(format+"/an older oncegen", func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{})
			with(mended)
			write(t, dir, format, Options{})
			file, snap := read(t, filepath.Join(dir, up)), read(t, filepath.Join(dir, SnapshotFile))
			with(released)
			if written := write(t, dir, format, Options{}); len(written) != 0 {
				t.Errorf("an older oncegen wrote %v", written)
			}
			if read(t, filepath.Join(dir, up)) != file || read(t, filepath.Join(dir, SnapshotFile)) != snap {
				t.Errorf("an older oncegen changed the mended file or the snapshot")
			}
		})
		t.Run(format+"/file gone", func(t *testing.T) {
			dir := t.TempDir()
			with(released)
			write(t, dir, format, Options{})
			if err := os.Remove(filepath.Join(dir, up)); err != nil {
				t.Fatal(err)
			}
			with(mended)
			written := write(t, dir, format, Options{})
			want := []string{SnapshotFile}
			if format == "atlas" {
				want = []string{atlasSumFile, SnapshotFile}
			}
			if !slices.Equal(written, want) {
				t.Errorf("an amended step whose file is gone wrote %v, want %v", written, want)
			}
		})
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
