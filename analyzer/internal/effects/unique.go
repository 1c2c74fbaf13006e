package effects

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/schema"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// uniqueKeys holds the unique constraints of the package's module (see schema.ForPackage),
// read once per package.
type uniqueKeys struct{ schema *schema.Schema }

// schemaOf returns the module's unique constraints, or nil when none can be read.
func (s *scanner) schemaOf() *schema.Schema {
	if s.uniques == nil {
		s.uniques = &uniqueKeys{}
		if len(s.pass.Files) > 0 {
			dir := filepath.Dir(s.pass.Fset.File(s.pass.Files[0].Pos()).Name())
			if sc, err := schema.ForPackage(dir, nil); err == nil {
				s.uniques.schema = sc
			}
		}
	}
	return s.uniques.schema
}

// uniqueInsert reports whether call sends a plain insert (no ON CONFLICT) that a repeat
// cannot make: a unique constraint or primary key of its table, declared in the module's
// schema, covers columns the insert gives values a second call gives again (its
// parameters, its receiver's fields, constants, and strings formatted from them). A
// repeat then fails with a unique violation, so the insert's error tells the first call
// from a repeat: "make the insert the check" written by hand, a latch (see LatchFact).
// A key given an id minted in the call (a UUID, a random token, the clock) is never
// refused, and a value the function cannot be seen to keep stable is taken for one. The
// insert must be a statement of the function's body, not of a branch (insert if absent,
// else update: the error then tells nothing) or a loop.
func (s *scanner) uniqueInsert(fn *Func, st sqltext.Stmt, call *ast.CallExpr) bool {
	if st.Kind != sqltext.Insert || st.OnConflict || st.ORM != "" || len(st.Values) == 0 || !topLevel(fn.Decl.Body, call) {
		return false // in a branch, its error variable may be another statement's
	}
	u, ok := s.schemaOf().Covers(st.Table, st.Columns)
	if !ok {
		return false
	}
	first := s.argsAfterQuery(call, st)
	if first < 0 {
		return false
	}
	for _, col := range u.Columns {
		i, ok := st.Arg(col)
		if !ok || first+i >= len(call.Args) || !s.stableValue(fn, call.Args[first+i], 0) {
			return false
		}
	}
	return true
}

// argsAfterQuery returns the index of the first argument after the statement's text, or
// -1 when the text is not among the call's arguments.
func (s *scanner) argsAfterQuery(call *ast.CallExpr, st sqltext.Stmt) int {
	for i, a := range call.Args {
		tv, ok := s.pass.TypesInfo.Types[a]
		if ok && tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == st.Text {
			return i + 1
		}
	}
	return -1
}

// stableValue reports whether e is a value a second call of fn with the same arguments
// gives again: a constant, a parameter or the receiver (or a field of one), a local
// variable every assignment of which is stable, and conversions, arithmetic and
// fmt, strconv and strings functions of those.
func (s *scanner) stableValue(fn *Func, e ast.Expr, depth int) bool {
	if depth > 6 {
		return false
	}
	info := s.pass.TypesInfo
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok {
			return false
		}
		if paramIndex(fn.Obj, v) >= 0 || fn.Obj.Signature().Recv() == v {
			return true
		}
		if !declaredIn(v, fn.Decl.Body) {
			return false // a package-level variable may change between calls
		}
		return s.stableLocal(fn, v, depth+1)
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[x]; ok && sel.Kind() == types.FieldVal {
			return s.stableValue(fn, x.X, depth+1)
		}
	case *ast.StarExpr:
		return s.stableValue(fn, x.X, depth+1)
	case *ast.BinaryExpr:
		return s.stableValue(fn, x.X, depth+1) && s.stableValue(fn, x.Y, depth+1)
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() {
			return len(x.Args) == 1 && s.stableValue(fn, x.Args[0], depth+1)
		}
		callee, ok := typeutil.Callee(info, x).(*types.Func)
		if !ok || callee.Pkg() == nil || callee.Signature().Recv() != nil {
			return false
		}
		switch p := callee.Pkg().Path(); {
		case p == "fmt" && strings.HasPrefix(callee.Name(), "Sprint"), p == "strconv", p == "strings":
		default:
			return false
		}
		for _, a := range x.Args {
			if !s.stableValue(fn, a, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// stableLocal reports whether every assignment of the local variable v in fn is stable
// (and there is one).
func (s *scanner) stableLocal(fn *Func, v *types.Var, depth int) bool {
	info := s.pass.TypesInfo
	seen, stable := false, true
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if !stable {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok || info.ObjectOf(id) != v {
					continue
				}
				seen = true
				if len(n.Rhs) != len(n.Lhs) || n.Tok != token.ASSIGN && n.Tok != token.DEFINE || !s.stableValue(fn, n.Rhs[i], depth) {
					stable = false
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if info.ObjectOf(id) != v {
					continue
				}
				seen = true
				if len(n.Values) != len(n.Names) || !s.stableValue(fn, n.Values[i], depth) {
					stable = false
				}
			}
		case *ast.UnaryExpr:
			// &v handed to something that may fill it.
			if id, ok := n.X.(*ast.Ident); ok && n.Op == token.AND && info.ObjectOf(id) == v {
				stable = false
			}
		}
		return true
	})
	return seen && stable
}
