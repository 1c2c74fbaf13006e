package onceschema

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ErrSchema: the database lacks an object the code relies on, holds it INVALID, or holds it
// in another form than the one the code was generated for. Verify's *Error wraps it.
var ErrSchema = errors.New("once: the database does not hold what the code relies on")

// Verify checks that db holds everything the program's guards rely on: the runtime's own
// tables and indexes (RuntimeRequirements) and every object registered with Require by the
// generated code linked into the program. It returns nil when all are there, valid and in
// the form the code was generated for; a *Error (errors.Is(err, ErrSchema)) naming
// every one that is missing, INVALID or in another form; or another error when the check
// could not be made. It only reads the catalog.
//
// Given a *pgxpool.Pool whose default_query_exec_mode keeps prepared statements on a server
// session (cache_statement, pgx's default, or describe_exec), it also checks that the pool
// does not reach PostgreSQL through a pooler in transaction mode, which would fail every
// guard's statements, and returns ErrPoolMode if it does (see docs/deployment.md).
//
// Call it once at start-up, after migrating, and refuse to serve when it fails: a unique
// index that is missing, or INVALID after a failed CREATE INDEX CONCURRENTLY, lets
// duplicates through without a single error, so the setting every guard depends on is
// proven before the first request rather than assumed.
//
//	if err := once.Verify(ctx, pool); err != nil {
//		return fmt.Errorf("the database is not ready: %w", err)
//	}
//
// What it finds that breaks no guard but weakens what a promise survives (a standby the
// server does not wait for at commit: ErrAsyncStandby) does not fail it: Verify logs it with
// slog's default logger, and VerifyWarnings returns it.
func Verify(ctx context.Context, db DB) error {
	warnings, err := VerifyWarnings(ctx, db)
	for _, w := range warnings {
		slog.Default().WarnContext(ctx, "once: verify: "+w.Detail, "warning", w.Err.Error())
	}
	return err
}

// VerifyWarnings is Verify, returning what it would log as well: the warnings come with a
// nil error, and with a *Error too. Each Warning says what was seen and what to do;
// errors.Is(w, ErrAsyncStandby) tells their kind.
func VerifyWarnings(ctx context.Context, db DB) ([]Warning, error) {
	if err := VerifyRequirements(ctx, db, append(RuntimeRequirements(), Requirements()...)...); err != nil {
		var schema *Error
		if !errors.As(err, &schema) {
			return nil, err
		}
		w, werr := replicationWarnings(ctx, db)
		if werr != nil {
			return nil, errors.Join(err, werr)
		}
		return w, err
	}
	return replicationWarnings(ctx, db)
}

// VerifyRequirements is Verify for exactly reqs (oncegen verify passes those of the
// packages it loaded). Its answers are Verify's.
func VerifyRequirements(ctx context.Context, db DB, reqs ...Requirement) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	for _, r := range reqs {
		if err := r.check(); err != nil {
			return err
		}
	}
	if err := verifyPool(ctx, db); err != nil {
		return err
	}
	problems, err := findProblems(ctx, db, reqs)
	if err != nil {
		return fmt.Errorf("once: verify: %w", err)
	}
	if len(problems) > 0 {
		return &Error{Problems: problems}
	}
	return nil
}

// Fault is what is wrong with a required object.
type Fault string

// The faults Verify finds.
const (
	// FaultMissing: the object is not there.
	FaultMissing Fault = "missing"
	// FaultInvalid: an index that a failed (or unfinished) concurrent build left INVALID,
	// a CHECK constraint added NOT VALID and never validated, or a disabled trigger. It does
	// not hold.
	FaultInvalid Fault = "invalid"
	// FaultDiffers: the object is there in another form than the one required.
	FaultDiffers Fault = "differs"
	// FaultBehind: the database is at an earlier step of the runtime's schema than the one
	// required (Live says which).
	FaultBehind Fault = "behind"
)

// Problem is one required object the database lacks, holds INVALID, or holds in another
// form.
type Problem struct {
	Requirement Requirement
	Fault       Fault
	// Live is what the database holds, when it holds something.
	Live string
}

// String says what is wrong with which object, what to do, and which guards rely on it,
// one fact per line.
func (p Problem) String() string {
	var b strings.Builder
	label := p.Requirement.label()
	switch p.Fault {
	case FaultMissing:
		fmt.Fprintf(&b, "missing: %s", label)
	case FaultInvalid:
		switch p.Requirement.Kind {
		case IndexObject:
			fmt.Fprintf(&b, "INVALID: %s (a failed concurrent build left it, enforcing nothing; most often the table already holds a key twice: resolve those duplicates first — the query that lists them is in the comment of its migration — then DROP INDEX CONCURRENTLY it and apply its migration again)", label)
		case TriggerObject:
			fmt.Fprintf(&b, "INVALID: %s (disabled: it fires for no change; ENABLE TRIGGER it)", label)
		default:
			fmt.Fprintf(&b, "INVALID: %s (added NOT VALID and never validated: VALIDATE CONSTRAINT it)", label)
		}
	case FaultBehind:
		fmt.Fprintf(&b, "behind: once's tables are at schema step %s, this runtime needs step %s (run onceschema.Migrate, or apply the migrations oncegen wrote)", p.Live, p.Requirement.Def)
	default:
		fmt.Fprintf(&b, "differs: %s\n  want: %s\n  have: %s", label, p.Requirement.Def, p.Live)
	}
	if len(p.Requirement.Guards) > 0 {
		fmt.Fprintf(&b, "\n  relied on by: %s", strings.Join(p.Requirement.Guards, ", "))
	}
	return b.String()
}

// Error is Verify's answer when required objects are missing, INVALID or in
// another form: it names them all. errors.Is(err, ErrSchema) holds for it.
type Error struct {
	Problems []Problem
}

// Error lists every problem, one per line after the first.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d object(s) missing, INVALID or in another form (apply the migrations oncegen wrote, or run onceschema.Migrate):", ErrSchema, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrSchema) true.
func (e *Error) Is(target error) bool { return target == ErrSchema }

// live is what the catalog holds for one requirement.
type live struct {
	def   string
	valid bool
}

// catalogSQL reads back each kind of object, for all requirements of that kind in one
// statement ($1 tables, $2 names): a row for each object found, none for one missing.
var catalogSQL = map[ObjectKind]string{
	TableObject: `SELECT r.tbl, r.name, '', true
FROM unnest($1::text[], $2::text[]) AS r(tbl, name)
WHERE to_regclass(r.tbl) IS NOT NULL`,
	// An index name is unique in its schema: the table it is on is part of its definition.
	IndexObject: `SELECT r.tbl, r.name, pg_get_indexdef(i.indexrelid), i.indisvalid
FROM unnest($1::text[], $2::text[]) AS r(tbl, name)
JOIN pg_namespace n ON n.nspname = split_part(r.tbl, '.', 1)
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = r.name
JOIN pg_index i ON i.indexrelid = c.oid`,
	ColumnObject: `SELECT r.tbl, r.name, format_type(a.atttypid, a.atttypmod), true
FROM unnest($1::text[], $2::text[]) AS r(tbl, name)
JOIN pg_attribute a ON a.attrelid = to_regclass(r.tbl) AND a.attname = r.name AND a.attnum > 0 AND NOT a.attisdropped`,
	CheckObject: `SELECT r.tbl, r.name, pg_get_constraintdef(c.oid), c.convalidated
FROM unnest($1::text[], $2::text[]) AS r(tbl, name)
JOIN pg_constraint c ON c.conrelid = to_regclass(r.tbl) AND c.conname = r.name AND c.contype = 'c'`,
	// A disabled trigger (ALTER TABLE .. DISABLE TRIGGER) fires for nobody: not valid.
	TriggerObject: `SELECT r.tbl, r.name, pg_get_triggerdef(t.oid), t.tgenabled <> 'D'
FROM unnest($1::text[], $2::text[]) AS r(tbl, name)
JOIN pg_trigger t ON t.tgrelid = to_regclass(r.tbl) AND t.tgname = r.name AND NOT t.tgisinternal`,
}

// findProblems reads every requirement back from the catalog, one statement per kind of
// object, and compares.
func findProblems(ctx context.Context, db DB, reqs []Requirement) ([]Problem, error) {
	type id struct{ table, name string }
	found := map[ObjectKind]map[id]live{}
	for _, kind := range []ObjectKind{TableObject, IndexObject, ColumnObject, CheckObject, TriggerObject} {
		var tables, names []string
		for _, r := range reqs {
			if r.Kind == kind {
				tables, names = append(tables, r.Table), append(names, r.Name)
			}
		}
		if len(tables) == 0 {
			continue
		}
		rows, err := db.Query(ctx, catalogSQL[kind], tables, names)
		if err != nil {
			return nil, fmt.Errorf("reading the %ss: %w", kind, err)
		}
		got := map[id]live{}
		for rows.Next() {
			var k id
			var l live
			if err := rows.Scan(&k.table, &k.name, &l.def, &l.valid); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading the %ss: %w", kind, err)
			}
			got[k] = l
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("reading the %ss: %w", kind, err)
		}
		found[kind] = got
	}
	var out []Problem
	applied := -1 // read once, at the first step requirement
	for _, r := range reqs {
		if r.Kind == StepObject {
			if applied < 0 {
				n, err := AppliedStep(ctx, db)
				if err != nil {
					return nil, err
				}
				applied = n
			}
			if want, _ := strconv.Atoi(r.Def); applied < want { // Def checked by check
				out = append(out, Problem{Requirement: r, Fault: FaultBehind, Live: strconv.Itoa(applied)})
			}
			continue
		}
		l, ok := found[r.Kind][id{r.Table, r.Name}]
		switch {
		case !ok:
			out = append(out, Problem{Requirement: r, Fault: FaultMissing})
		case !l.valid:
			out = append(out, Problem{Requirement: r, Fault: FaultInvalid, Live: l.def})
		case r.Def != "" && l.def != r.Def:
			out = append(out, Problem{Requirement: r, Fault: FaultDiffers, Live: l.def})
		}
	}
	return out, nil
}
