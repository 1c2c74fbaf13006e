package once005

import (
	_ "embed"
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
	"github.com/oncekit/once/analyzer/internal/schema"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE005"

// Analyzer reports check-then-insert races, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer reading promises from facts.
func New(facts *analysis.Analyzer) *analysis.Analyzer { return NewWithSchema(facts, nil) }

// NewWithSchema returns the analyzer reading promises from facts, and unique constraints
// from the module's schema files and the files or directories named (relative to the
// module root). Its -schema flag names more.
func NewWithSchema(facts *analysis.Analyzer, schemas []string) *analysis.Analyzer {
	sf := &listFlag{names: append([]string(nil), schemas...)}
	a := &analysis.Analyzer{
		Name:      "once005",
		Doc:       passdoc.Extract(doc, "once005"),
		URL:       "https://pkg.go.dev/github.com/oncekit/once/analyzer/once005",
		Requires:  []*analysis.Analyzer{facts, freshAnalyzer},
		Run:       func(pass *analysis.Pass) (any, error) { return run(pass, facts, sf.get()) },
		FactTypes: []analysis.Fact{new(ModelsFact)},
	}
	a.Flags.Var(sf, "schema", "schema `file`s or directories holding unique constraints (comma-separated or repeated), relative to the module root")
	return a
}

// SchemaFlag returns the -schema flag of an analyzer made by NewWithSchema, so a command
// can offer it under a shorter name.
func SchemaFlag(a *analysis.Analyzer) flag.Value {
	if f := a.Flags.Lookup("schema"); f != nil && a.Name == "once005" {
		return f.Value
	}
	return nil
}

func run(pass *analysis.Pass, facts *analysis.Analyzer, schemas []string) (any, error) {
	own := models(pass)
	if len(own) > 0 {
		pass.ExportPackageFact(&ModelsFact{Models: own})
	}
	fresh := pass.ResultOf[freshAnalyzer].(*freshIndex)
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	if res.Fast {
		return nil, nil
	}
	c := &checker{pass: pass, rep: rep, res: res, schemas: schemas, fresh: fresh}
	if len(schemas) > 0 {
		c.loadSchema() // a name that does not exist is an error wherever it is given
	}
	for _, fn := range res.Funcs {
		if fn.Test || fn.Generated || fn.Covered || fn.Serializable || len(fn.SQL) == 0 {
			continue
		}
		if c.models == nil {
			c.models = indexModels(pass, own)
		}
		c.check(fn)
	}
	if c.schemaErr != nil {
		return nil, fmt.Errorf("once005: %w", c.schemaErr)
	}
	return nil, nil
}

// checker holds what the checks of one package share: the models of the package and its
// dependencies, and the module's schema, read when a finding first depends on it.
type checker struct {
	pass    *analysis.Pass
	rep     *ignore.Reporter
	res     *effects.Result
	models  modelIndex
	schemas []string
	fresh   *freshIndex // the functions that make new values
	byDecl  map[*ast.FuncDecl]*effects.Func

	schema    *schema.Schema
	schemaErr error
	loaded    bool
}

// unique reports whether the schema files or the model's tags declare a unique
// constraint on table among the columns keys.
func (c *checker) unique(table string, keys []string, models ...string) bool {
	for _, m := range models {
		if m != "" && c.models.tagCovers(m, keys) {
			return true
		}
	}
	c.loadSchema()
	_, ok := c.schema.Covers(table, keys)
	return ok
}

// loadSchema reads the module's schema once per package (and, through the schema
// package's cache, once per run).
func (c *checker) loadSchema() {
	if c.loaded {
		return
	}
	c.loaded = true
	if len(c.pass.Files) > 0 {
		dir := filepath.Dir(c.pass.Fset.File(c.pass.Files[0].Pos()).Name())
		c.schema, c.schemaErr = schema.ForPackage(dir, c.schemas)
	}
}

// check reports the inserts of fn that a read of the same table decides with nothing to
// serialise the two: plain inserts, and upserts that add to the row with no condition.
func (c *checker) check(fn *effects.Func) {
	pass, rep, res := c.pass, c.rep, c.res
	ops := make([]effects.SQLOp, len(fn.SQL))
	for i, op := range fn.SQL {
		op.Stmt = c.models.resolve(op.Stmt)
		ops[i] = op
	}
	for i, ins := range ops {
		st := ins.Stmt
		if ins.Guarded || st.Kind != sqltext.Insert || res.Declared(st.Table) {
			continue
		}
		upsert := st.Upsert && st.Accumulates && !st.UpdateWhere
		if st.OnConflict && !upsert {
			continue
		}
		if !upsert && (handlesUniqueViolation(pass.TypesInfo, res, fn.Decl.Body) || insertHandles(pass.TypesInfo, res, ins)) {
			continue // a unique index stands behind the insert: the loser gets 23505
		}
		if st.FindOrCreate {
			if !lockedBefore(ops[:i], st.Table) && !c.unique(st.Table, st.Keys, st.Model) && !c.lockedByCallers(fn, st.Table) {
				rep.Report(findOrCreateDiagnostic(&ops[i]))
			}
			continue
		}
		var read *effects.SQLOp
		locked := false
		for j := range ops[:i] {
			prev := &ops[j]
			if prev.Call == ins.Call || prev.Guarded {
				continue
			}
			switch {
			case prev.Stmt.Kind == sqltext.Lock:
				locked = true
			case prev.Stmt.Kind == sqltext.Read && prev.Stmt.RowLock && !readsTable(prev.Stmt, st.Table):
				locked = true // a parent row held FOR UPDATE serialises the children
			case prev.Stmt.Kind == sqltext.Read && readsTable(prev.Stmt, st.Table) && read == nil &&
				sqltext.SameRows(prev.Stmt, st) && decides(pass.TypesInfo, fn.Decl.Body, prev.Call, ins.Call, upsert):
				read = prev
			}
		}
		if locked || read == nil {
			continue
		}
		if !upsert && c.unique(st.Table, read.Stmt.Keys, st.Model, read.Stmt.Model) {
			continue // the schema's unique index refuses the second insert
		}
		if c.lockedByCallers(fn, st.Table) {
			continue // every caller holds a lock, in the transaction it hands fn
		}
		if !upsert && c.stateKeyed(fn, ops, &ops[i]) {
			continue // racing calls make the same unique key, and the second insert fails
		}
		if !upsert && c.naturalKey(fn, &ops[i]) {
			continue // a repeat of the same input makes the same primary key
		}
		if !upsert && c.newRowKeyed(fn, ops, &ops[i], read) {
			continue // keyed by a row this call just inserted: no other call has its id
		}
		rep.Report(diagnostic(&ops[i], read, upsert))
	}
}

// lockedBefore reports a lock taken among ops: an advisory lock, a table lock, or a row
// of another table than table held FOR UPDATE.
func lockedBefore(ops []effects.SQLOp, table string) bool {
	for _, prev := range ops {
		if prev.Guarded {
			continue
		}
		switch {
		case prev.Stmt.Kind == sqltext.Lock:
			return true
		case prev.Stmt.Kind == sqltext.Read && prev.Stmt.RowLock && !readsTable(prev.Stmt, table):
			return true
		}
	}
	return false
}

// findOrCreateDiagnostic reports a call that reads and then inserts by itself (gorm's
// FirstOrCreate) with no unique constraint behind it.
func findOrCreateDiagnostic(op *effects.SQLOp) analysis.Diagnostic {
	table := op.Stmt.Table
	what := "FirstOrCreate on " + table
	if op.Via != nil {
		what += " by " + effects.FuncName(op.Via)
	}
	return analysis.Diagnostic{
		Pos: op.Call.Pos(), End: op.Call.End(),
		Message: fmt.Sprintf("%s reads then inserts with no lock, no ON CONFLICT and no unique constraint on the columns it looks up: two calls can both find nothing and both insert; put a unique index on %s's looked-up columns (in a migration, or a uniqueIndex tag) and handle gorm.ErrDuplicatedKey, or declare //once:transaction",
			what, table),
	}
}

func diagnostic(ins, read *effects.SQLOp, upsert bool) analysis.Diagnostic {
	table := ins.Stmt.Table
	insert, by := "insert into "+table, ""
	if upsert {
		insert = "upsert into " + table
	}
	if ins.Via != nil {
		insert += " by " + effects.FuncName(ins.Via)
	}
	if read.Via != nil {
		by = " by " + effects.FuncName(read.Via)
	}
	d := analysis.Diagnostic{Pos: ins.Call.Pos(), End: ins.Call.End()}
	if upsert {
		d.Message = fmt.Sprintf("%s adds to the row with no condition (DO UPDATE without WHERE), and a read of %s%s decides it: two calls can both read room under the limit and both add; make the statement decide (DO UPDATE .. WHERE the new total is within the limit, RETURNING, no row back is the refusal) or declare //once:statement",
			insert, table, by)
	} else if orm := ins.Stmt.ORM; orm != "" {
		d.Message = fmt.Sprintf("%s is decided by a read of %s%s with no lock, no conflict clause and no unique constraint on the columns it looks up (none in the schema files or the model's tags): two calls can both read before either inserts, and both insert; put a unique index on them and make the insert the check (%s), or declare //once:transaction",
			insert, table, by, conflictHint[orm])
	} else {
		d.Message = fmt.Sprintf("%s is decided by a read of %s%s with no lock, no ON CONFLICT and no declared constraint: two calls can both read before either inserts, and both insert; make the insert the check (INSERT .. ON CONFLICT on a unique index, declared with //once:... table=%s) or declare //once:transaction",
			insert, table, by, table)
	}
	d.Related = []analysis.RelatedInformation{{Pos: read.Call.Pos(), Message: "the read that decides it"}}
	return d
}

// conflictHint says how each ORM makes an insert its own check.
var conflictHint = map[sqltext.ORM]string{
	sqltext.Gorm: "Clauses(clause.OnConflict{DoNothing: true}), or handle gorm.ErrDuplicatedKey",
	sqltext.Xorm: "handle the unique violation the insert returns",
	sqltext.Bun:  `On("CONFLICT (...) DO NOTHING")`,
	sqltext.Ent:  "OnConflict(...).Ignore(), or handle ent.IsConstraintError",
}

// uniqueViolation holds the ways code names a unique violation: PostgreSQL's SQLSTATE
// (a literal, or pgerrcode.UniqueViolation, a constant of the same value) and condition
// name (lib/pq's Code.Name()), and the text MySQL ("Duplicate entry") and SQLite
// ("UNIQUE constraint failed") put in the error, which code written for them matches.
var uniqueViolation = map[string]bool{"23505": true, "unique_violation": true, "Duplicate entry": true, "UNIQUE constraint failed": true}

// handlesUniqueViolation reports whether body tests for a unique violation, itself or
// through a function of the package it calls: code that does has a unique index behind
// its insert, and the race ends in an error one caller handles, not in a duplicate. That
// is the find-or-create idiom (look the row up, insert it when absent, and read the
// winner's row back on 23505).
func handlesUniqueViolation(info *types.Info, res *effects.Result, body *ast.BlockStmt) bool {
	if namesUniqueViolation(info, body) {
		return true
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			if fn, ok := typeutil.Callee(info, call).(*types.Func); ok {
				helper := res.ByObj[fn.Origin()]
				found = helper != nil && helper.Decl.Body != body && namesUniqueViolation(info, helper.Decl.Body)
			}
		}
		return !found
	})
	return found
}

// namesUniqueViolation reports whether body holds a constant naming a unique violation,
// or an ORM's name for it: gorm's ErrDuplicatedKey (with TranslateError), ent's
// IsConstraintError.
func namesUniqueViolation(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		if id, ok := n.(*ast.Ident); ok {
			if obj := info.Uses[id]; obj != nil && obj.Pkg() != nil {
				found = (obj.Pkg().Path() == "gorm.io/gorm" && obj.Name() == "ErrDuplicatedKey") ||
					(obj.Name() == "IsConstraintError" && isFunc(obj))
			}
			return !found
		}
		if e, ok := n.(ast.Expr); ok {
			tv, ok := info.Types[e]
			found = ok && tv.Value != nil && tv.Value.Kind() == constant.String && uniqueViolation[constant.StringVal(tv.Value)]
		}
		return !found
	})
	return found
}

func isFunc(obj types.Object) bool {
	_, ok := obj.(*types.Func)
	return ok
}

// insertHandles reports whether the helper of the package that sends the insert handles
// its unique violation itself.
func insertHandles(info *types.Info, res *effects.Result, ins effects.SQLOp) bool {
	if ins.Via == nil {
		return false
	}
	helper := res.ByObj[ins.Via]
	return helper != nil && namesUniqueViolation(info, helper.Decl.Body)
}

func readsTable(s sqltext.Stmt, table string) bool {
	for _, t := range s.Tables {
		if sqltext.SameTable(t, table) {
			return true
		}
	}
	return false
}

// listFlag is a repeatable, comma-separated list of names.
type listFlag struct {
	mu    sync.Mutex
	names []string
}

func (f *listFlag) String() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.names, ",")
}

func (f *listFlag) Set(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			f.names = append(f.names, name)
		}
	}
	return nil
}

func (f *listFlag) get() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.names...)
}
