package once005

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/passdoc"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE005"

// Analyzer reports check-then-insert races, with the built-in catalogue.
var Analyzer = New(effects.Analyzer)

// New returns the analyzer reading promises from facts.
func New(facts *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     "once005",
		Doc:      passdoc.Extract(doc, "once005"),
		URL:      "https://pkg.go.dev/github.com/oncekit/once/analyzer/once005",
		Requires: []*analysis.Analyzer{facts},
		Run:      func(pass *analysis.Pass) (any, error) { return run(pass, facts) },
	}
}

func run(pass *analysis.Pass, facts *analysis.Analyzer) (any, error) {
	res := pass.ResultOf[facts].(*effects.Result)
	rep := ignore.NewReporter(pass, res.Ignores, Code)
	defer rep.Finish()
	if res.Fast {
		return nil, nil
	}
	for _, fn := range res.Funcs {
		if fn.Test || fn.Generated || fn.Covered || fn.Serializable || len(fn.SQL) < 2 {
			continue
		}
		check(pass, rep, res, fn)
	}
	return nil, nil
}

// check reports the inserts of fn that a read of the same table decides with nothing to
// serialise the two: plain inserts, and upserts that add to the row with no condition.
func check(pass *analysis.Pass, rep *ignore.Reporter, res *effects.Result, fn *effects.Func) {
	ops := fn.SQL
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
				sqltext.SameRows(prev.Stmt, st) && decides(pass.TypesInfo, fn.Decl.Body, prev.Call, ins.Call):
				read = prev
			}
		}
		if locked || read == nil {
			continue
		}
		rep.Report(diagnostic(&ops[i], read, upsert))
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
	} else {
		d.Message = fmt.Sprintf("%s is decided by a read of %s%s with no lock, no ON CONFLICT and no declared constraint: two calls can both read before either inserts, and both insert; make the insert the check (INSERT .. ON CONFLICT on a unique index, declared with //once:... table=%s) or declare //once:transaction",
			insert, table, by, table)
	}
	d.Related = []analysis.RelatedInformation{{Pos: read.Call.Pos(), Message: "the read that decides it"}}
	return d
}

// uniqueViolation holds the ways code names PostgreSQL's unique_violation: its SQLSTATE
// (a literal, or pgerrcode.UniqueViolation, a constant of the same value) and its
// condition name (lib/pq's Code.Name()).
var uniqueViolation = map[string]bool{"23505": true, "unique_violation": true}

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

// namesUniqueViolation reports whether body holds a constant naming a unique violation.
func namesUniqueViolation(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && !found {
			tv, ok := info.Types[e]
			found = ok && tv.Value != nil && tv.Value.Kind() == constant.String && uniqueViolation[constant.StringVal(tv.Value)]
		}
		return !found
	})
	return found
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
