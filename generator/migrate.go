package generator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SnapshotFile is the name of the snapshot kept beside the migrations: what oncegen has
// emitted so far, so the next run emits only the difference.
const SnapshotFile = "oncegen.snapshot.json"

// Formats are the migration formats oncegen writes.
var Formats = []string{"sql", "goose", "migrate", "atlas"}

// Snapshot is what the migrations in a directory have created, as oncegen emitted it.
type Snapshot struct {
	Version int `json:"version"`
	// Guards are every declared guard (with or without table=), to see renames.
	Guards []SnapshotGuard `json:"guards"`
	// Objects are the DDL objects the migrations created.
	Objects []Object `json:"objects"`
}

// SnapshotGuard is a guard's identity in a snapshot.
type SnapshotGuard struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Func string `json:"func"`
	Key  string `json:"key"`
	// Table is the table of a table= guard, whose promise lives on the table's rows.
	Table string `json:"table,omitempty"`
}

// Step is one group of statements applied together: in one transaction, or, for a
// concurrent index build, alone and outside any transaction.
type Step struct {
	Title      string
	Up, Down   []string
	Concurrent bool
}

// Plan is the difference between a snapshot and the declarations: the steps that bring a
// database from one to the other, and the snapshot after them.
type Plan struct {
	Steps []Step
	Next  Snapshot
}

// ReadSnapshot reads the snapshot in dir; a directory without one has an empty snapshot.
func ReadSnapshot(dir string) (Snapshot, error) {
	b, err := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return Snapshot{Version: 1}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the snapshot: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return Snapshot{}, fmt.Errorf("reading %s: %w", filepath.Join(dir, SnapshotFile), err)
	}
	if s.Version != 1 {
		return Snapshot{}, fmt.Errorf("%s: snapshot version %d: this oncegen reads version 1", filepath.Join(dir, SnapshotFile), s.Version)
	}
	return s, nil
}

// MarshalSnapshot renders s deterministically.
func MarshalSnapshot(s Snapshot) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot: %w", err)
	}
	return append(b, '\n'), nil
}

// Diff compares the snapshot with the guards and their objects. A guard that vanished while
// another of the same kind and key appeared is taken for a rename, which would silently reset
// its history: Diff refuses it, unless allowRename. A table= guard is never taken for one:
// its promise lives on the table's rows and index, which a new name leaves as they are (the
// name appears only in errors).
//
// The plan's Next snapshot records every guard, so a plan with no steps may still carry a
// snapshot that differs from prev (a guard without table= added, removed or renamed):
// MigrationFiles then writes the snapshot alone, and a rename accepted once is not reported
// again.
func Diff(prev Snapshot, guards []*Guard, objs []Object, allowRename bool) (*Plan, error) {
	next := Snapshot{Version: 1, Objects: objs}
	for _, g := range guards {
		next.Guards = append(next.Guards, SnapshotGuard{Name: g.Name, Kind: string(g.Kind), Func: g.PkgPath + "." + g.FuncName(), Key: g.KeyText(), Table: g.Table})
	}
	sort.Slice(next.Guards, func(i, j int) bool { return next.Guards[i].Name < next.Guards[j].Name })
	if err := checkRenames(prev.Guards, next.Guards, allowRename); err != nil {
		return nil, err
	}

	old := map[string]Object{}
	for _, o := range prev.Objects {
		old[o.ID] = o
	}
	cur := map[string]Object{}
	for _, o := range objs {
		cur[o.ID] = o
	}
	var dropIdx, create []Object
	var txUp, txDown []string
	// Removed or changed objects go first, in reverse order of creation.
	for i := len(prev.Objects) - 1; i >= 0; i-- {
		o := prev.Objects[i]
		if n, ok := cur[o.ID]; ok && n.Up == o.Up {
			continue
		}
		if o.Kind == ObjRuntime {
			continue // the runtime's schema only grows: see below
		}
		if o.Concurrent {
			dropIdx = append(dropIdx, o)
		} else {
			txUp = append(txUp, o.Down)
			txDown = append([]string{o.Up}, txDown...)
		}
	}
	var steps []Object
	for _, o := range objs {
		if o.Kind == ObjRuntime {
			// A step of the runtime's schema is emitted once, in a file of its own, and
			// never again: a released step does not change, and a database that applied it
			// recorded it.
			if _, had := old[o.ID]; !had {
				steps = append(steps, o)
			}
			continue
		}
		if p, ok := old[o.ID]; ok && p.Up == o.Up {
			continue
		}
		if o.Concurrent {
			create = append(create, o)
		} else {
			txUp = append(txUp, o.Up)
			txDown = append([]string{o.Down}, txDown...)
		}
	}
	plan := &Plan{Next: next}
	for _, o := range steps {
		plan.Steps = append(plan.Steps, Step{Title: "once_schema_" + strings.TrimPrefix(o.ID, "runtime:step:") + "_" + o.Name, Up: []string{o.Up}, Down: []string{o.Down}})
	}
	for _, o := range dropIdx {
		plan.Steps = append(plan.Steps, Step{Title: "drop_" + o.Name, Up: []string{o.Down}, Down: []string{o.Up}, Concurrent: true})
	}
	if len(txUp) > 0 {
		plan.Steps = append(plan.Steps, Step{Title: "once", Up: txUp, Down: txDown})
	}
	for _, o := range create {
		plan.Steps = append(plan.Steps, Step{Title: o.Name, Up: []string{o.Up}, Down: []string{o.Down}, Concurrent: true})
	}
	return plan, nil
}

func checkRenames(prev, next []SnapshotGuard, allow bool) error {
	if allow {
		return nil
	}
	names := map[string]bool{}
	for _, g := range next {
		names[g.Name] = true
	}
	was := map[string]bool{}
	for _, g := range prev {
		was[g.Name] = true
	}
	var msgs []string
	for _, gone := range prev {
		if names[gone.Name] || gone.Table != "" {
			continue
		}
		for _, g := range next {
			if !was[g.Name] && g.Table == "" && g.Kind == gone.Kind && g.Key == gone.Key {
				msgs = append(msgs, fmt.Sprintf("guard %s (%s) looks renamed to %s (%s), same kind and key: its stored history is under the old name; add name=%s to the directive to keep it, or run with -allow-rename to start afresh",
					gone.Name, gone.Func, g.Name, g.Func, gone.Name))
			}
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

var versionRE = regexp.MustCompile(`^(\d+)_`)

// nextVersion is one more than the highest version among the files in dir.
func nextVersion(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("listing %s: %w", dir, err)
	}
	max := 0
	for _, e := range entries {
		if m := versionRE.FindStringSubmatch(e.Name()); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > max {
				max = n
			}
		}
	}
	return max + 1, nil
}

// MigrationFiles renders plan's steps in format, numbered from the next free version in dir,
// with the new snapshot (and, for atlas, the checksum file). Keys are file names in dir. A
// plan with no steps renders only the snapshot, and only when it differs from the one in
// dir; nothing when the directory is up to date.
func MigrationFiles(dir, format string, plan *Plan) (map[string][]byte, error) {
	if len(plan.Steps) == 0 {
		return snapshotOnly(dir, plan.Next)
	}
	v, err := nextVersion(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for i, st := range plan.Steps {
		base := fmt.Sprintf("%04d_%s", v+i, st.Title)
		switch format {
		case "sql":
			files[base+".up.sql"] = []byte(sqlFile(st, st.Up))
			files[base+".down.sql"] = []byte(sqlFile(st, st.Down))
		case "migrate":
			files[base+".up.sql"] = []byte(migrateFile(st, st.Up))
			files[base+".down.sql"] = []byte(migrateFile(st, st.Down))
		case "goose":
			files[base+".sql"] = []byte(gooseFile(st))
		case "atlas":
			files[base+".sql"] = []byte(atlasFile(st))
		default:
			return nil, fmt.Errorf("unknown migration format %q (formats: %s)", format, strings.Join(Formats, ", "))
		}
	}
	snap, err := MarshalSnapshot(plan.Next)
	if err != nil {
		return nil, err
	}
	files[SnapshotFile] = snap
	if format == "atlas" {
		sum, err := atlasSum(dir, files)
		if err != nil {
			return nil, err
		}
		files[atlasSumFile] = sum
	}
	return files, nil
}

// snapshotOnly returns the snapshot file when next differs from the one in dir, else no
// file. It is compared as bytes, as written. (A plan without steps always has a snapshot to
// compare with: a first run has the runtime's schema to write.)
func snapshotOnly(dir string, next Snapshot) (map[string][]byte, error) {
	snap, err := MarshalSnapshot(next)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	if err == nil && string(old) == string(snap) {
		return map[string][]byte{}, nil
	}
	return map[string][]byte{SnapshotFile: snap}, nil
}

const fileHeader = "-- Generated by oncegen for review: the constraints once's guards rely on.\n"

func concurrentNote(st Step) string {
	if st.Concurrent {
		return "-- CONCURRENTLY cannot run inside a transaction, so this file holds one statement and no\n" +
			"-- transaction. If the build fails it leaves an INVALID index: oncegen verify reports it;\n" +
			"-- drop it (DROP INDEX CONCURRENTLY) and apply this file again.\n"
	}
	return ""
}

func sqlFile(st Step, stmts []string) string {
	var b strings.Builder
	b.WriteString(fileHeader)
	b.WriteString(concurrentNote(st))
	if !st.Concurrent {
		b.WriteString("BEGIN;\n\n")
	}
	b.WriteString(strings.Join(stmts, "\n\n"))
	b.WriteString("\n")
	if !st.Concurrent {
		b.WriteString("\nCOMMIT;\n")
	}
	return b.String()
}

func migrateFile(st Step, stmts []string) string {
	// golang-migrate's postgres driver sends a file as one multi-statement query, which
	// PostgreSQL runs as one transaction; a CONCURRENTLY file holds its one statement alone.
	return fileHeader + concurrentNote(st) + strings.Join(stmts, "\n\n") + "\n"
}

func gooseFile(st Step) string {
	var b strings.Builder
	b.WriteString(fileHeader)
	b.WriteString(concurrentNote(st))
	if st.Concurrent {
		b.WriteString("-- +goose NO TRANSACTION\n")
	}
	section := func(name string, stmts []string) {
		fmt.Fprintf(&b, "\n-- +goose %s\n", name)
		for _, s := range stmts {
			// StatementBegin/End hands goose each statement whole, whatever it holds.
			b.WriteString("-- +goose StatementBegin\n")
			b.WriteString(s)
			b.WriteString("\n-- +goose StatementEnd\n")
		}
	}
	section("Up", st.Up)
	section("Down", st.Down)
	return b.String()
}

func atlasFile(st Step) string {
	var b strings.Builder
	if st.Concurrent {
		// Atlas reads its directives from the file's first lines.
		b.WriteString("-- atlas:txmode none\n\n")
	}
	b.WriteString(fileHeader)
	b.WriteString(concurrentNote(st))
	b.WriteString(strings.Join(st.Up, "\n\n"))
	b.WriteString("\n")
	return b.String()
}
