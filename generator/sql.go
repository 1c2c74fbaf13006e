package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/oncekit/once/internal/directive"
	"github.com/oncekit/once/runtime/onceschema"
)

// Object kinds: what a piece of DDL creates, and how verify finds it in a live database
// (the runtime's object kinds, and the runtime's schema as one object).
const (
	ObjRuntime = "runtime"                       // the runtime's own schema
	ObjColumn  = string(onceschema.ColumnObject) // a latch or counter column on a user's table
	ObjCheck   = string(onceschema.CheckObject)  // a CHECK constraint on a counter column
	ObjIndex   = string(onceschema.IndexObject)  // a unique index a table= form relies on
)

// Object is one piece of DDL oncegen emits, with its reverse.
type Object struct {
	// ID identifies the object across runs: kind:schema.table.name.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Table is the schema-qualified table, Name the column, constraint or index.
	Table string `json:"table,omitempty"`
	Name  string `json:"name,omitempty"`
	// Def is what PostgreSQL prints for the object (pg_get_indexdef, pg_get_constraintdef,
	// format_type), compared as text by verify; for a runtime step, its number.
	Def string `json:"def,omitempty"`
	// Hash, for a runtime step, is the SHA-256 of its Up as emitted: the snapshot keeps the
	// step's name and hash, not its statements, which live in the migration file and in the
	// runtime (a released step is never edited).
	Hash string `json:"sha256,omitempty"`
	// Up creates the object; Down removes it. A runtime step's are not kept in the snapshot.
	Up   string `json:"up,omitempty"`
	Down string `json:"down,omitempty"`
	// Validate, for a CHECK added NOT VALID, is the statement that checks the rows already
	// there, in a later file.
	Validate string `json:"validate,omitempty"`
	// Concurrent objects are built with CONCURRENTLY: outside a transaction, alone in a file.
	Concurrent bool `json:"concurrent,omitempty"`
	// Guards names the guards relying on the object.
	Guards []string `json:"guards"`
	// Duplicates, for a unique index, is the query that lists the keys the table holds more
	// than once, which stop its build (directive.Directive.DuplicatesQuery): its file says
	// how to go on from a failed build. Not in the snapshot: it follows from Def.
	Duplicates string `json:"-"`
}

// Objects returns the DDL the guards rely on, in the order it must be applied: the steps of
// the runtime's schema, then columns, checks and indexes by table and name. Two guards relying on the same
// object share it; two defining one name differently are an error (a *directive.Error, at
// the second guard's directive).
func Objects(guards []*Guard) ([]Object, error) {
	return ObjectsWith(guards, Options{})
}

// Options are the choices a user makes about the migrations oncegen writes.
type Options struct {
	// LockTimeout and StatementTimeout are set (SET LOCAL) by every transactional file, as
	// PostgreSQL reads them: 5s, 1min. Empty: DefaultLockTimeout, DefaultStatementTimeout.
	LockTimeout, StatementTimeout string
	// DownDropsOnceTables makes the down part of the runtime's first schema step drop once's
	// tables and every row in them. Without it, a generated down never drops them: they hold
	// what was promised, billed and owed.
	DownDropsOnceTables bool
	// OnceDir, when not empty, is the directory the steps of once's own schema (its tables)
	// are written to, numbered on their own, rather than the migrations directory, which
	// keeps the snapshot and the table= files: a tool reading the migrations directory for
	// the app's schema (sqlc, an ORM) then never sees once's tables. The two are applied as
	// two migration sets (see cmd/oncegen).
	OnceDir string
}

// onceDir is where once's schema steps go for the migrations directory dir, and the path
// of that directory relative to dir ("" when it is dir itself).
func (o Options) onceDir(dir string) (string, string, error) {
	if o.OnceDir == "" {
		return dir, "", nil
	}
	from, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	to, err := filepath.Abs(o.OnceDir)
	if err != nil {
		return "", "", fmt.Errorf("resolving %s: %w", o.OnceDir, err)
	}
	if from == to {
		return dir, "", nil
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return "", "", fmt.Errorf("once's migrations directory %s beside %s: %w", o.OnceDir, dir, err)
	}
	return o.OnceDir, rel, nil
}

// ObjectsWith is Objects with opts.
func ObjectsWith(guards []*Guard, opts Options) ([]Object, error) {
	rest, err := tableObjects(guards)
	if err != nil {
		return nil, err
	}
	return append(runtimeObjects(opts.DownDropsOnceTables), rest...), nil
}

// tableObjects is Objects without the runtime's schema: what the table= guards rely on.
func tableObjects(guards []*Guard) ([]Object, error) {
	byID := map[string]*Object{}
	add := func(o Object, g *Guard) error {
		if prev, ok := byID[o.ID]; ok {
			// Compared by definition, not by Up: a column's Up names the guard that adds it,
			// and two guards declaring the same column the same way share it.
			if prev.Def != o.Def {
				return &directive.Error{Pos: g.Slash, Position: g.Position,
					Msg: fmt.Sprintf("%s %s is declared twice, differently (also by %s): give the guards different columns or the same declaration",
						o.Kind, o.Name, strings.Join(prev.Guards, ", "))}
			}
			prev.Guards = append(prev.Guards, g.Name)
			return nil
		}
		o.Guards = []string{g.Name}
		byID[o.ID] = &o
		return nil
	}
	for _, g := range guards {
		if !g.HasTable() {
			continue
		}
		table := g.QualifiedTable()
		for _, c := range g.TableColumns() {
			if err := add(columnObject(table, g.Name, c), g); err != nil {
				return nil, err
			}
		}
		for _, c := range g.TableChecks() {
			// NOT VALID takes the lock only for a moment: rows written from now on are
			// checked at once, and the rows already there are read by VALIDATE in a later
			// file, under a lock that lets writes go on.
			if err := add(Object{
				ID: "check:" + table + "." + c.Name, Kind: ObjCheck, Table: table, Name: c.Name,
				Def:      c.Def,
				Up:       fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s NOT VALID;", table, c.Name, c.Def),
				Validate: fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s;", table, c.Name),
				Down:     fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s;", table, c.Name),
			}, g); err != nil {
				return nil, err
			}
		}
		def := g.IndexDef()
		schema, _, _ := strings.Cut(table, ".")
		if err := add(Object{
			ID: "index:" + schema + "." + g.IndexName(), Kind: ObjIndex, Table: table, Name: g.IndexName(),
			Def: def,
			// Written as PostgreSQL prints it, so pg_get_indexdef round-trips it; no IF NOT
			// EXISTS, so an INVALID index left by a failed build stops the migration instead
			// of being taken for a good one.
			Up: "-- No IF NOT EXISTS: an INVALID index left by a failed build must stop this file, not pass\n" +
				"-- for a valid one.\n-- squawk-ignore prefer-robust-stmts\n" +
				strings.Replace(def, "CREATE UNIQUE INDEX ", "CREATE UNIQUE INDEX CONCURRENTLY ", 1) + ";",
			Down:       fmt.Sprintf("DROP INDEX CONCURRENTLY IF EXISTS %s.%s;", schema, g.IndexName()),
			Concurrent: true,
			Duplicates: g.DuplicatesQuery(),
		}, g); err != nil {
			return nil, err
		}
	}
	rank := map[string]int{ObjColumn: 1, ObjCheck: 2, ObjIndex: 3}
	rest := make([]Object, 0, len(byID))
	for _, o := range byID {
		sort.Strings(o.Guards)
		rest = append(rest, *o)
	}
	sort.Slice(rest, func(i, j int) bool {
		if rank[rest[i].Kind] != rank[rest[j].Kind] {
			return rank[rest[i].Kind] < rank[rest[j].Kind]
		}
		return rest[i].ID < rest[j].ID
	})
	return rest, nil
}

// addedMark begins the comment oncegen puts on a column it added: the down drops the column
// only when it carries it, so a column the table already had is never dropped.
const addedMark = "once: added by oncegen"

// columnObject adopts a column the table already has, after checking its form, or adds it.
// Whether the column exists is known only when the migration runs, so the up decides then,
// in a DO block, and marks a column it added with a comment; the down drops the column only
// when it carries the mark.
func columnObject(table, guard string, c directive.Column) Object {
	column := c.Name
	nullness := "NULL"
	if c.NotNull {
		nullness = "NOT NULL"
	}
	var added strings.Builder
	fmt.Fprintf(&added, "\t\tALTER TABLE %s ADD COLUMN %s %s;\n", table, column, c.Add)
	if c.SetDefault != "" {
		fmt.Fprintf(&added, "\t\tALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s;\n", table, column, c.SetDefault)
	}
	fmt.Fprintf(&added, "\t\tCOMMENT ON COLUMN %s.%s IS '%s for %s (its down drops it)';\n", table, column, addedMark, strings.ReplaceAll(guard, "'", "''"))
	up := fmt.Sprintf(`-- %[1]s.%[2]s: adopted if the table has it (%[3]s %[4]s), else added.
DO $once$
DECLARE
	have record;
BEGIN
	SELECT format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull INTO have
	FROM pg_attribute a
	WHERE a.attrelid = '%[1]s'::regclass AND a.attname = '%[2]s' AND a.attnum > 0 AND NOT a.attisdropped;
	IF NOT FOUND THEN
%[5]s	ELSIF have.type <> '%[3]s' OR have.notnull <> %[6]t THEN
		RAISE EXCEPTION 'once: column %[1]s.%[2]s is %% %%, and the %[7]s of guard %[8]s needs %[3]s %[4]s: alter the column, or name another %[7]s= column',
			have.type, CASE WHEN have.notnull THEN 'NOT NULL' ELSE 'NULL' END;
	END IF;
END
$once$;`, table, column, c.Type, nullness, added.String(), c.NotNull, c.Role, strings.ReplaceAll(guard, "'", "''"))
	down := fmt.Sprintf(`-- %[1]s.%[2]s is dropped only if its up added it (the comment says so).
DO $once$
BEGIN
	IF col_description(to_regclass('%[1]s'), (SELECT a.attnum FROM pg_attribute a
		WHERE a.attrelid = to_regclass('%[1]s') AND a.attname = '%[2]s' AND NOT a.attisdropped)) LIKE '%[3]s%%' THEN
		ALTER TABLE %[1]s DROP COLUMN %[2]s;
	END IF;
END
$once$;`, table, column, addedMark)
	return Object{
		ID: "column:" + table + "." + column, Kind: ObjColumn, Table: table, Name: column,
		Def: c.Type, Up: up, Down: down,
	}
}

// schemaSteps are the runtime's schema steps (a test grows them by one).
var schemaSteps = onceschema.Steps

// runtimeObjects are the steps of the runtime's schema, one object each, identified by
// number: a snapshot holding a step has emitted it, so only the steps it lacks are new. A
// step's down keeps once's tables and their rows unless dropData, which the user asks for
// by name (-down-drops-once-tables).
func runtimeObjects(dropData bool) []Object {
	var out []Object
	for _, s := range schemaSteps() {
		down := s.Down
		if dropData && s.DropData != "" {
			down = s.DropData
		}
		up := strings.TrimRight(s.Up, "\n") + "\n\n" + s.RecordSQL()
		sum := sha256.Sum256([]byte(up))
		out = append(out, Object{
			ID: fmt.Sprintf("runtime:step:%04d", s.Number), Kind: ObjRuntime, Name: s.Name,
			Def:    strconv.Itoa(s.Number),
			Hash:   hex.EncodeToString(sum[:]),
			Up:     up,
			Down:   s.UnrecordSQL() + "\n\n" + strings.TrimRight(down, "\n"),
			Guards: []string{},
		})
	}
	return out
}

// Requirements returns what the objects are to once.Verify: the runtime's schema steps stand
// for onceschema.RuntimeRequirements, every other object for itself. oncegen verify checks
// these, and each package's generated file registers those of its own guards, so the command
// and the program's start-up check the same things the same way.
func Requirements(objs []Object) []onceschema.Requirement {
	var out []onceschema.Requirement
	runtime := false
	for _, o := range objs {
		if o.Kind == ObjRuntime {
			if !runtime {
				out = append(out, onceschema.RuntimeRequirements()...)
				runtime = true
			}
			continue
		}
		out = append(out, onceschema.Requirement{Kind: onceschema.ObjectKind(o.Kind), Table: o.Table, Name: o.Name, Def: o.Def, Guards: o.Guards})
	}
	return out
}
