package once

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
)

// The runtime's schema is a sequence of numbered steps, kept in schema/ as
// NNNN_name.up.sql (the DDL), NNNN_name.down.sql (what undoes it without losing data) and,
// for a step that creates data-bearing tables, NNNN_name.drop.sql (the down that drops them,
// emitted only when a user asks for it by name). Each step is applied once and records
// itself in once.schema_steps in the transaction that applies it, so once.Migrate, a
// migration oncegen wrote and once.Verify all read the same step from the database.
//
// To grow the schema, add a step; never edit a released one (databases have applied it, and
// oncegen's snapshots have emitted it), with one exception: a released step that fails on
// some databases stops every step after it, so no later step can mend it. Such a step is
// mended in place. Its new text must apply wherever the old one failed, and change no more
// than the old one did wherever the old one applied (a database that applied it keeps it
// recorded and never runs the new text). The released text goes to
// schema/superseded/NNNN_name.K.up.sql (K counting the step's mends from 1), which is how
// oncegen knows a snapshot holding it is older than the runtime, and rewrites the step's
// statements in the file it wrote (see generator.Amendment); a snapshot holding a text the
// runtime does not know is newer, and is left as it is. Step 11 is the one so mended: as
// released, it ran TRUNCATE where a foreign key of another table or a role's privileges made
// PostgreSQL refuse it.
//
//  1. Write schema/NNNN_name.up.sql with the next number: plain DDL, no BEGIN/COMMIT and no
//     SET (Migrate and oncegen add the transaction and the timeouts). It must be online DDL
//     (squawk finds nothing in it; the generator's tests run squawk on it): a new column
//     nullable or with a constant default, a CHECK added NOT VALID. A step runs in one
//     transaction, so it cannot build an index CONCURRENTLY; what reads every row (a
//     backfill, a VALIDATE) goes in a step of its own, after the step that took a strong
//     lock has committed. A step whose DDL must not run twice (steps 6 to 9 move a column,
//     and a migration tool may apply their files after Migrate did) runs it in a DO block
//     that first looks at the catalog; squawk does not read inside DO blocks, so such a step
//     says in its comment what locks it takes and why each is short.
//  2. Write schema/NNNN_name.down.sql undoing it without dropping data a user cannot get
//     back (a column or table that holds rows stays, and the file says why); and
//     NNNN_name.drop.sql when the step creates such a thing and dropping it is what a user
//     would ask for by name.
//  3. Add what the step creates to schemaIndexes or schemaTriggers (verify_schema.go) when it
//     is an index or a trigger.
//
// LatestSchemaStep then grows by one, Verify requires it, Migrate applies it, and the next
// oncegen run writes one new migration holding only that step.
//
//go:embed schema/*.sql schema/superseded/*.sql
var schemaFiles embed.FS

// SchemaStep is one numbered step of the runtime's schema.
type SchemaStep struct {
	// Number orders the steps from 1, with no gaps.
	Number int
	// Name says what the step does (tables, operations_retain).
	Name string
	// Up is the step's DDL, without transaction control or timeouts.
	Up string
	// Down undoes Up, except that it keeps tables and columns holding data no later Up
	// could give back, and says so in a comment.
	Down string
	// DropData, when not empty, is a Down that also drops those tables and columns with
	// their data.
	DropData string
	// Superseded are the texts Up had in earlier releases, oldest first: empty for a step
	// never mended after its release.
	Superseded []string
}

// RecordSQL is the statement that records the step as applied, run in the transaction that
// applies it.
func (s SchemaStep) RecordSQL() string {
	return fmt.Sprintf("INSERT INTO once.schema_steps (step, name) VALUES (%d, '%s') ON CONFLICT (step) DO NOTHING;", s.Number, s.Name)
}

// UnrecordSQL takes the step's record back, run by its down.
func (s SchemaStep) UnrecordSQL() string {
	return fmt.Sprintf("DELETE FROM once.schema_steps WHERE step = %d;", s.Number)
}

var schemaSteps = loadSchemaSteps()

// SchemaSteps returns the steps of the runtime's schema, in order.
func SchemaSteps() []SchemaStep {
	return append([]SchemaStep(nil), schemaSteps...)
}

// LatestSchemaStep is the number of the last step this runtime knows: the step Verify
// requires of a database.
func LatestSchemaStep() int { return len(schemaSteps) }

// Schema is the Up of every step, in order. Every statement of the first step is IF NOT
// EXISTS, so a database made before the schema had steps adopts it unchanged.
var Schema = func() string {
	var b strings.Builder
	for _, s := range schemaSteps {
		b.WriteString(s.Up)
	}
	return b.String()
}()

var (
	stepFileRE       = regexp.MustCompile(`^schema/(\d{4})_([a-z0-9_]+)\.(up|down|drop)\.sql$`)
	supersededFileRE = regexp.MustCompile(`^schema/superseded/(\d{4})_([a-z0-9_]+)\.([1-9])\.up\.sql$`)
)

func loadSchemaSteps() []SchemaStep {
	names, err := fs.Glob(schemaFiles, "schema/*.sql")
	if err != nil {
		panic(err) // the pattern is a constant: it cannot be malformed
	}
	var steps []SchemaStep
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
		if len(steps) < n {
			if n != len(steps)+1 {
				panic(fmt.Sprintf("once: schema step %d follows step %d: steps are numbered without gaps", n, len(steps)))
			}
			steps = append(steps, SchemaStep{Number: n, Name: m[2]})
		}
		s := &steps[n-1]
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
	superseded, err := fs.Glob(schemaFiles, "schema/superseded/*.sql")
	if err != nil {
		panic(err)
	}
	for _, name := range superseded { // sorted: a step's mends in order, while K < 10
		m := supersededFileRE.FindStringSubmatch(name)
		if m == nil {
			panic("once: superseded schema file " + name + " is not named NNNN_name.K.up.sql")
		}
		n, _ := strconv.Atoi(m[1])
		if k, _ := strconv.Atoi(m[3]); n < 1 || n > len(steps) || steps[n-1].Name != m[2] || k != len(steps[n-1].Superseded)+1 {
			panic("once: superseded schema file " + name + " names no step, or is not its next mend")
		}
		text, err := schemaFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		steps[n-1].Superseded = append(steps[n-1].Superseded, string(text))
	}
	for _, s := range steps {
		if s.Up == "" || s.Down == "" {
			panic(fmt.Sprintf("once: schema step %d (%s) needs both an up and a down file", s.Number, s.Name))
		}
	}
	return steps
}

// AppliedSchemaStep returns the last step of the runtime's schema applied to db: 0 when
// none is (a database without once.schema_steps, including one made before the schema had
// steps). Migrate, Verify and oncegen verify all read it this way.
func AppliedSchemaStep(ctx context.Context, db DB) (int, error) {
	if err := checkContextDB(ctx, db); err != nil {
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

// Migrate applies the steps of the runtime's schema that db lacks, each in a transaction of
// its own that records it in once.schema_steps, so a step that reads a large table (a
// backfill, a validation) does not run while an earlier step's strong lock is still held.
// Concurrent callers (several instances starting at once) serialise on an advisory lock
// taken in each step's transaction, so none of them fails on a half-created table, and the
// later ones find nothing left to do. A lock_timeout keeps a step that waits behind a long
// transaction from stalling every query on its table: Migrate fails instead, the steps
// before it stay applied, and it can be run again. Given a pgx.Tx, the steps run in
// savepoints of that one transaction, which holds every step's locks until it ends, and
// keeps none of them unless it commits: pass a pool or a connection.
func Migrate(ctx context.Context, db DB) error {
	if err := checkDB(db); err != nil {
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
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", LockID("once.schema", "migrate")); err != nil {
		return false, fmt.Errorf("once: migrate: lock: %w", err)
	}
	at, err := AppliedSchemaStep(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("once: migrate: %w", err)
	}
	if at >= len(schemaSteps) {
		return true, nil
	}
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '10s'"); err != nil {
		return false, fmt.Errorf("once: migrate: %w", err)
	}
	s := schemaSteps[at]
	if _, err := tx.Exec(ctx, s.Up+"\n"+s.RecordSQL()); err != nil {
		return false, fmt.Errorf("once: migrate: step %d (%s): %w", s.Number, s.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("once: migrate: step %d (%s): commit: %w", s.Number, s.Name, err)
	}
	return false, nil
}
