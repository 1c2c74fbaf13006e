package once005

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

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
	declared := map[string]bool{}
	for _, d := range res.Directives {
		if d.HasTable() {
			declared[d.Table] = true
		}
	}
	for _, f := range pass.Files {
		if !mentionsInsert(f) || strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
				if fn := res.ByObj[obj]; fn != nil && fn.Covered {
					continue
				}
			}
			check(pass, rep, fd.Body, declared)
		}
	}
	return nil, nil
}

// mentionsInsert is the fast path: a file with no string holding INSERT has nothing to
// check.
func mentionsInsert(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && strings.Contains(strings.ToLower(lit.Value), "insert") {
			found = true
		}
		return !found
	})
	return found
}

func check(pass *analysis.Pass, rep *ignore.Reporter, body *ast.BlockStmt, declared map[string]bool) {
	calls := sqltext.Calls(pass.TypesInfo, body)
	if len(calls) < 2 || sqltext.Serializable(pass.TypesInfo, body) {
		return
	}
	var ifs []*ast.IfStmt
	ast.Inspect(body, func(n ast.Node) bool {
		if s, ok := n.(*ast.IfStmt); ok {
			ifs = append(ifs, s)
		}
		return true
	})
	for i, ins := range calls {
		st := ins.Stmt
		if st.Kind != sqltext.Insert || st.OnConflict || isDeclared(declared, st.Table) {
			continue
		}
		var read *sqltext.Call
		locked := false
		for j := range calls[:i] {
			prev := calls[j].Stmt
			switch {
			case prev.Kind == sqltext.Lock:
				locked = true
			case prev.Kind == sqltext.Read && prev.RowLock && !readsTable(prev, st.Table):
				locked = true // a parent row held FOR UPDATE serialises the children
			case prev.Kind == sqltext.Read && readsTable(prev, st.Table) && read == nil:
				read = &calls[j]
			}
		}
		if locked || read == nil || !decidedBetween(ifs, read.Call, ins.Call) {
			continue
		}
		rep.Report(analysis.Diagnostic{
			Pos: ins.Call.Pos(),
			End: ins.Call.End(),
			Message: fmt.Sprintf("insert into %s is decided by a read of %s with no lock, no ON CONFLICT and no declared constraint: two calls can both read before either inserts, and both insert; make the insert the check (INSERT .. ON CONFLICT on a unique index, declared with //once:... table=%s) or declare //once:transaction",
				st.Table, st.Table, st.Table),
			Related: []analysis.RelatedInformation{{Pos: read.Call.Pos(), Message: "the read that decides it"}},
		})
	}
}

func readsTable(s sqltext.Stmt, table string) bool {
	for _, t := range s.Tables {
		if sqltext.SameTable(t, table) {
			return true
		}
	}
	return false
}

func isDeclared(declared map[string]bool, table string) bool {
	for t := range declared {
		if sqltext.SameTable(t, table) {
			return true
		}
	}
	return false
}

// decidedBetween reports an if statement after the read that holds the insert or comes
// before it: the read's answer decides whether to insert.
func decidedBetween(ifs []*ast.IfStmt, read, insert ast.Node) bool {
	for _, s := range ifs {
		if s.Pos() > read.End() && s.Pos() < insert.Pos() {
			return true
		}
	}
	return false
}
