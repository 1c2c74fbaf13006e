package once005

import (
	"go/ast"
	"go/types"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// stateKeyed reports whether the row fn inserts gets a unique column from the table's
// own state: before the insert, fn sets a field of the inserted model to a value
// computed by a read of the same table (the name "github_" + (max id + 1)), and the
// column is unique (a tag or the schema). Two calls that race both read the same
// state, make the same key, and the second insert fails on it: the race ends in an
// error, not in a duplicate row.
func (c *checker) stateKeyed(fn *effects.Func, ops []effects.SQLOp, ins *effects.SQLOp) bool {
	info := c.pass.TypesInfo
	table := ins.Stmt.Table
	// reads of the table, by the call that makes them
	var reads []*ast.CallExpr
	for i := range ops {
		if op := &ops[i]; op.Stmt.Kind == sqltext.Read && readsTable(op.Stmt, table) && op.Call.Pos() < ins.Call.Pos() {
			reads = append(reads, op.Call)
		}
	}
	if len(reads) == 0 {
		return false
	}
	inserted := handlesOfValue(info, ins.Call)
	found := false
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if found || n == nil || n.Pos() >= ins.Call.Pos() {
			return false
		}
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, lhs := range as.Lhs {
			sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr)
			if !ok || !holdsAny(as.Rhs[i], reads) {
				continue
			}
			root := rootVar(info, sel.X)
			if root == nil || !inserted[root] {
				continue
			}
			col, model, ok := fieldColumn(info, sel)
			if ok && c.unique(table, []string{col}, model) {
				found = true
			}
		}
		return !found
	})
	return found
}

// holdsAny reports whether e contains one of calls.
func holdsAny(e ast.Expr, calls []*ast.CallExpr) bool {
	for _, call := range calls {
		if e.Pos() <= call.Pos() && call.End() <= e.End() {
			return true
		}
	}
	return false
}

// handlesOfValue returns the variables at the root of an insert call's receiver and
// arguments (user in user.Insert(ctx), u in db.Create(&u)).
func handlesOfValue(info *types.Info, call *ast.CallExpr) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	exprs := append([]ast.Expr(nil), call.Args...)
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		exprs = append(exprs, sel.X)
	}
	for _, e := range exprs {
		if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok {
			e = u.X
		}
		if v := rootVar(info, e); v != nil {
			out[v] = true
		}
	}
	return out
}

// rootVar returns the variable at the root of x, x.f or x[i].
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			v, _ := info.ObjectOf(x).(*types.Var)
			return v
		default:
			return nil
		}
	}
}

// fieldColumn names the column of a model's field set by sel (user.Username), and the
// model's qualified type name.
func fieldColumn(info *types.Info, sel *ast.SelectorExpr) (col, model string, ok bool) {
	s, ok := info.Selections[sel]
	if !ok || s.Kind() != types.FieldVal || len(s.Index()) != 1 {
		return "", "", false
	}
	named := modelNamed(s.Recv())
	if named == nil {
		return "", "", false
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok {
		return "", "", false
	}
	i := s.Index()[0]
	return columnOf(st.Field(i).Name(), st.Tag(i)), named.Obj().Pkg().Path() + "." + named.Obj().Name(), true
}

func modelNamed(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	if n == nil || n.Obj().Pkg() == nil {
		return nil
	}
	return n
}
