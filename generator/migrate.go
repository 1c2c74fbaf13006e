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

	"github.com/oncekit/once/internal/directive"
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
	// Duplicates, for a unique index's build, is the query listing the keys that stop it
	// (Object.Duplicates), which the file's comment gives.
	Duplicates string
	// OnceSchema marks a step of once's own schema, which Options.OnceDir may send to a
	// directory of its own.
	OnceSchema bool
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
	next := Snapshot{Version: 1, Objects: make([]Object, len(objs))}
	for i, o := range objs {
		if o.Kind == ObjRuntime {
			o.Up, o.Down = "", "" // its name and hash: the statements are the runtime's
		}
		next.Objects[i] = o
	}
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
	// An object is changed when its form (Def) is, not its text: a newer oncegen that writes
	// the same column or index differently changes nothing in the database.
	same := func(a, b Object) bool { return a.Def == b.Def && a.Kind == b.Kind }

	// Expand, then contract: what is added comes first (columns, checks NOT VALID, then
	// each index, built concurrently in a file of its own), then the checks are validated,
	// and only then are the old indexes dropped and the old columns and checks removed. A
	// changed index is built under a temporary name, the old one dropped, and the new one
	// renamed: at every point between files the table has a unique index.
	var steps, build, drop []Object
	var expandUp, expandDown, validate, contractUp, contractDown, revalidate []string
	type rename struct{ table, from, to string }
	var renames []rename
	for i, o := range objs {
		p, had := old[o.ID]
		switch {
		case o.Kind == ObjRuntime:
			// A step of the runtime's schema is emitted once, in a file of its own, and
			// never again: a database that applied it recorded it, and a released step is
			// never edited (onceschema's package doc). The snapshot keeps the hash it was
			// emitted with.
			if !had {
				steps = append(steps, o)
			} else {
				next.Objects[i] = p
			}
		case had && same(p, o):
		case o.Kind == ObjIndex && had:
			schema, _, _ := strings.Cut(o.Table, ".")
			tmp := nextName(o.Name)
			next := o
			next.Name = tmp
			next.Up = strings.Replace(o.Up, "INDEX CONCURRENTLY "+o.Name+" ON ", "INDEX CONCURRENTLY "+tmp+" ON ", 1)
			next.Down = fmt.Sprintf("DROP INDEX CONCURRENTLY IF EXISTS %s.%s;", schema, tmp)
			build = append(build, next)
			drop = append(drop, p)
			renames = append(renames, rename{schema, tmp, o.Name})
		case o.Kind == ObjIndex:
			build = append(build, o)
		case had: // a check whose definition changed: the old one goes as the new one comes
			expandUp = append(expandUp, p.Down, o.Up)
			expandDown = append([]string{o.Down, p.Up}, expandDown...) // NOT VALID: see below
			validate = append(validate, o.Validate)
		default:
			expandUp = append(expandUp, o.Up)
			expandDown = append([]string{o.Down}, expandDown...)
			if o.Validate != "" {
				validate = append(validate, o.Validate)
			}
		}
	}
	// Removed objects go in reverse order of creation.
	for i := len(prev.Objects) - 1; i >= 0; i-- {
		o := prev.Objects[i]
		if _, ok := cur[o.ID]; ok || o.Kind == ObjRuntime {
			continue // kept or changed (above); the runtime's steps are never taken back here
		}
		if o.Kind == ObjIndex {
			drop = append(drop, o)
			continue
		}
		contractUp = append(contractUp, o.Down)
		contractDown = append([]string{o.Up}, contractDown...)
		if o.Validate != "" {
			revalidate = append(revalidate, o.Validate)
		}
	}
	if len(revalidate) > 0 {
		// Validating in the file that adds the check would hold its strong lock while every
		// row is read: a down part brings a check back NOT VALID (new rows are checked), and
		// says how to validate the rest.
		note := "-- These checks come back NOT VALID: once the down has run, validate them (each reads\n-- the table under a lock that lets writes go on):"
		for _, v := range revalidate {
			note += "\n--   " + v
		}
		contractDown = append(contractDown, note)
	}
	for _, r := range renames {
		contractUp = append([]string{fmt.Sprintf("ALTER INDEX %s.%s RENAME TO %s;", r.table, r.from, r.to)}, contractUp...)
		contractDown = append(contractDown, fmt.Sprintf("ALTER INDEX %s.%s RENAME TO %s;", r.table, r.to, r.from))
	}

	plan := &Plan{Next: next}
	for _, o := range steps {
		plan.Steps = append(plan.Steps, Step{Title: "once_schema_" + strings.TrimPrefix(o.ID, "runtime:step:") + "_" + o.Name, Up: []string{o.Up}, Down: []string{o.Down}, OnceSchema: true})
	}
	if len(expandUp) > 0 {
		plan.Steps = append(plan.Steps, Step{Title: "once", Up: expandUp, Down: expandDown})
	}
	for _, o := range build {
		plan.Steps = append(plan.Steps, Step{Title: o.Name, Up: []string{o.Up}, Down: []string{o.Down}, Concurrent: true, Duplicates: o.Duplicates})
	}
	if len(validate) > 0 {
		plan.Steps = append(plan.Steps, Step{Title: "once_validate", Up: validate,
			Down: []string{"-- Nothing to take back: validating a constraint changes no row, and the down part of the\n-- file that added it drops it."}})
	}
	for _, o := range drop {
		plan.Steps = append(plan.Steps, Step{Title: "drop_" + o.Name, Up: []string{o.Down}, Down: []string{o.Up}, Concurrent: true})
	}
	if len(contractUp) > 0 {
		plan.Steps = append(plan.Steps, Step{Title: "once_contract", Up: contractUp, Down: contractDown})
	}
	return plan, nil
}

// nextName is the temporary name of an index built to replace the one named name.
func nextName(name string) string {
	const suffix = "_next"
	if len(name)+len(suffix) > directive.MaxIdentLen {
		name = strings.TrimRight(name[:directive.MaxIdentLen-len(suffix)], "_")
	}
	return name + suffix
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
// dir; nothing when the directory is up to date. Every transactional file sets opts'
// timeouts (DefaultLockTimeout and DefaultStatementTimeout where they are empty). With
// opts.OnceDir, the steps of once's own schema are numbered from the next free version
// there, and their keys are paths relative to dir (../once/0001_once_schema_...).
func MigrationFiles(dir, format string, plan *Plan, opts Options) (map[string][]byte, error) {
	if len(plan.Steps) == 0 {
		return snapshotOnly(dir, plan.Next)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	onceDir, oncePrefix, err := opts.onceDir(dir)
	if err != nil {
		return nil, err
	}
	// Each directory by its path relative to dir, and its next version: one entry, and one
	// counter, when once's steps go to dir too.
	dirs := map[string]string{"": dir, oncePrefix: onceDir}
	next := map[string]int{}
	for prefix, d := range dirs {
		if next[prefix], err = nextVersion(d); err != nil {
			return nil, err
		}
	}
	files := map[string][]byte{}
	for _, st := range plan.Steps {
		prefix := ""
		if st.OnceSchema {
			prefix = oncePrefix
		}
		base := filepath.Join(prefix, fmt.Sprintf("%04d_%s", next[prefix], st.Title))
		next[prefix]++
		if !st.Concurrent {
			pre := opts.timeouts()
			st.Up = append(append([]string(nil), pre...), st.Up...)
			st.Down = append(append([]string(nil), pre...), st.Down...)
		}
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
	if format == "atlas" {
		// Each directory's checksum file covers its own files: the migrations directory's is
		// written whenever a step or an amendment is, once's where it has a new file.
		for prefix, d := range dirs {
			own := map[string][]byte{}
			for name, b := range files {
				if rel, err := filepath.Rel(prefix, name); err == nil && !strings.Contains(rel, string(filepath.Separator)) {
					own[rel] = b
				}
			}
			if len(own) == 0 && prefix != "" {
				continue
			}
			sum, err := atlasSum(d, own)
			if err != nil {
				return nil, err
			}
			files[filepath.Join(prefix, atlasSumFile)] = sum
		}
	}
	files[SnapshotFile] = snap
	return files, nil
}

// The timeouts a transactional file sets unless told otherwise. The statements oncegen
// writes there take their strong locks only for a moment (no row is rewritten or scanned
// under them), so a file that waits longer than this for a lock is queued behind a long
// transaction, and every query on the table is queued behind it: it is better to fail and
// be run again.
const (
	DefaultLockTimeout      = "5s"
	DefaultStatementTimeout = "1min"
)

var timeoutRE = regexp.MustCompile(`^[0-9]+(us|ms|s|min|h|d)?$`)

// Validate refuses a timeout PostgreSQL would not read.
func (o Options) Validate() error {
	for _, t := range []struct{ flag, v string }{{"lock timeout", o.LockTimeout}, {"statement timeout", o.StatementTimeout}} {
		if t.v != "" && !timeoutRE.MatchString(t.v) {
			return fmt.Errorf("%s %q: give a number with a unit PostgreSQL reads (500ms, 5s, 1min)", t.flag, t.v)
		}
	}
	return nil
}

// timeouts are the statements that open a transactional file. SET LOCAL lasts to the end of
// the file's transaction, so the session a migration tool goes on using is left as it was.
func (o Options) timeouts() []string {
	lock, stmt := o.LockTimeout, o.StatementTimeout
	if lock == "" {
		lock = DefaultLockTimeout
	}
	if stmt == "" {
		stmt = DefaultStatementTimeout
	}
	return []string{
		"-- A strong lock waited for longer than this fails the file (run it again later) rather than\n" +
			"-- queueing every query on the table behind it.\n" +
			fmt.Sprintf("SET LOCAL lock_timeout = '%s';", lock),
		fmt.Sprintf("SET LOCAL statement_timeout = '%s';", stmt),
	}
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
		failed := "-- transaction. If the build fails it leaves an INVALID index: oncegen verify reports it;\n" +
			"-- drop it (DROP INDEX CONCURRENTLY) and apply this file again.\n"
		if st.Duplicates != "" {
			// The likeliest failure of a unique index's build on a table in use, and the one
			// that applying the file again cannot mend.
			failed = "-- transaction.\n" +
				"-- A unique index cannot be built over a key the table already holds twice: the build then\n" +
				"-- fails (could not create unique index, 23505) and leaves the index INVALID, enforcing\n" +
				"-- nothing (oncegen verify reports it; golang-migrate marks its version dirty). To go on,\n" +
				"-- drop the INVALID index:\n" +
				"--   " + st.Down[0] + "\n" +
				"-- resolve the duplicate keys, which this query lists with how many rows hold each:\n" +
				"--   " + st.Duplicates + "\n" +
				"-- and apply this file again (golang-migrate: first migrate force the version before it).\n"
		}
		return "-- CONCURRENTLY cannot run inside a transaction, so this file holds one statement and no\n" +
			failed +
			"-- No timeouts: CONCURRENTLY takes only a SHARE UPDATE EXCLUSIVE lock, which no read or\n" +
			"-- write waits behind, and a timeout would stop it half-way, leaving an INVALID index.\n" +
			"-- squawk-ignore-file require-lock-timeout, require-statement-timeout\n"
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
