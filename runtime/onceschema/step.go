package onceschema

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"regexp"
	"strconv"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// The steps live in schema/ as NNNN_name.up.sql (the DDL), NNNN_name.down.sql (what undoes it
// without losing data) and, for a step that creates data-bearing tables, NNNN_name.drop.sql
// (the down that drops them). See the package doc for the rule that governs them.
//
//go:embed schema/*.sql
var schemaFiles embed.FS

// Step is one numbered step of the runtime's schema.
type Step struct {
	// Number orders the steps from 1, with no gaps.
	Number int
	// Name says what the step does (tables).
	Name string
	// Up is the step's DDL, without transaction control or timeouts.
	Up string
	// Down undoes Up, except that it keeps tables and columns holding data no later Up
	// could give back, and says so in a comment.
	Down string
	// DropData, when not empty, is a Down that also drops those tables and columns with
	// their data.
	DropData string
}

// RecordSQL is the statement that records the step as applied, run in the transaction that
// applies it.
func (s Step) RecordSQL() string {
	return fmt.Sprintf("INSERT INTO once.schema_steps (step, name) VALUES (%d, '%s') ON CONFLICT (step) DO NOTHING;", s.Number, s.Name)
}

// UnrecordSQL takes the step's record back, run by its down.
func (s Step) UnrecordSQL() string {
	return fmt.Sprintf("DELETE FROM once.schema_steps WHERE step = %d;", s.Number)
}

var steps = loadSteps()

// Steps returns the steps of the runtime's schema, in order.
func Steps() []Step {
	return append([]Step(nil), steps...)
}

// LatestStep is the number of the last step this runtime knows: the step Verify requires of
// a database.
func LatestStep() int { return len(steps) }

var stepFileRE = regexp.MustCompile(`^schema/(\d{4})_([a-z0-9_]+)\.(up|down|drop)\.sql$`)

func loadSteps() []Step {
	names, err := fs.Glob(schemaFiles, "schema/*.sql")
	if err != nil {
		panic(err) // the pattern is a constant: it cannot be malformed
	}
	var out []Step
	for _, name := range names { // sorted, so a step's files come in number order
		m := stepFileRE.FindStringSubmatch(name)
		if m == nil {
			panic("once: schema file " + name + " is not named NNNN_name.up|down|drop.sql")
		}
		n, _ := strconv.Atoi(m[1])
		text, err := schemaFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot fail to read
		}
		if len(out) < n {
			if n != len(out)+1 {
				panic(fmt.Sprintf("once: schema step %d follows step %d: steps are numbered without gaps", n, len(out)))
			}
			out = append(out, Step{Number: n, Name: m[2]})
		}
		s := &out[n-1]
		if s.Name != m[2] {
			panic(fmt.Sprintf("once: schema step %d is named both %s and %s", n, s.Name, m[2]))
		}
		switch m[3] {
		case "up":
			s.Up = string(text)
		case "down":
			s.Down = string(text)
		case "drop":
			s.DropData = string(text)
		}
	}
	for _, s := range out {
		if s.Up == "" || s.Down == "" {
			panic(fmt.Sprintf("once: schema step %d (%s) needs both an up and a down file", s.Number, s.Name))
		}
	}
	return out
}

// AppliedStep returns the last step of the runtime's schema applied to db: 0 when none is (a
// database without once.schema_steps). Migrate, Verify and oncegen verify all read it this
// way.
func AppliedStep(ctx context.Context, db DB) (int, error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	var exists bool
	if err := db.QueryRow(ctx, "SELECT to_regclass('once.schema_steps') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("once: reading the applied schema step: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var step int
	if err := db.QueryRow(ctx, "SELECT coalesce(max(step), 0) FROM once.schema_steps").Scan(&step); err != nil {
		return 0, fmt.Errorf("once: reading the applied schema step: %w", err)
	}
	return step, nil
}

// migrateLock is the advisory lock concurrent Migrate calls serialise on.
var migrateLock = func() int64 {
	h := fnv.New64a()
	h.Write([]byte("once.schema\x00migrate"))
	return int64(h.Sum64())
}()

// Migrate applies the steps of the runtime's schema that db lacks, each in a transaction of
// its own that records it in once.schema_steps. Concurrent callers (several instances
// starting at once) serialise on an advisory lock taken in each step's transaction, so none
// of them fails on a half-created table, and the later ones find nothing left to do. A
// lock_timeout keeps a step that waits behind a long transaction from stalling every query
// on its table: Migrate fails instead, the steps before it stay applied, and it can be run
// again. Given a pgx.Tx, the steps run in savepoints of that one transaction, which holds
// every step's locks until it ends, and keeps none of them unless it commits: pass a pool or
// a connection.
func Migrate(ctx context.Context, db DB) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	for {
		done, err := migrateStep(ctx, db)
		if err != nil || done {
			return err
		}
	}
}

// migrateStep applies the first step db lacks, in one transaction; done is true when db
// lacks none.
func migrateStep(ctx context.Context, db DB) (done bool, err error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("once: migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
		return false, fmt.Errorf("once: migrate: lock: %w", err)
	}
	at, err := AppliedStep(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("once: migrate: %w", err)
	}
	if at >= len(steps) {
		return true, nil
	}
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '10s'"); err != nil {
		return false, fmt.Errorf("once: migrate: %w", err)
	}
	s := steps[at]
	if _, err := tx.Exec(ctx, s.Up+"\n"+s.RecordSQL()); err != nil {
		return false, fmt.Errorf("once: migrate: step %d (%s): %w", s.Number, s.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("once: migrate: step %d (%s): commit: %w", s.Number, s.Name, err)
	}
	return false, nil
}
