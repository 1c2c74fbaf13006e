package once005

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// newRowKeyed reports whether the insert carries the id of a row fn itself inserted
// before it (a task inserted, then its favourite, its first comment, its membership):
// the database numbered that row for this call, so no other call can make a row with
// the same id, and no other call's insert duplicates this one. The id must reach a
// column the read compares (a field of the inserted literal set to it); where the read
// names no columns, anywhere in the inserted row. An id that reaches a column the read
// does not compare (an order's id in a subscription looked up by user) leaves the race
// on the columns it does compare.
func (c *checker) newRowKeyed(fn *effects.Func, ops []effects.SQLOp, ins, read *effects.SQLOp) bool {
	info := c.pass.TypesInfo
	rows := map[*types.Var]bool{} // variables holding a row inserted before ins
	ids := map[*types.Var]bool{}  // integers an earlier insert returned (RETURNING id, a helper's new id)
	for i := range ops {
		op := &ops[i]
		if op.Stmt.Kind != sqltext.Insert || op.Call == ins.Call || op.Call.Pos() >= ins.Call.Pos() || op.Guarded {
			continue
		}
		for v := range handlesOfValue(info, op.Call) {
			if rowType(v.Type()) {
				rows[v] = true
			}
		}
		if st := enclosingStmt(fn.Decl.Body, op.Call); st != nil {
			assigned(info, st, func(v *types.Var) {
				if isInteger(v.Type()) {
					ids[v] = true
				}
			})
		}
	}
	if len(rows) == 0 && len(ids) == 0 {
		return false
	}
	// A row inserted as a pointer taken from a slice (for _, t := range tasks {
	// insert(t) }) has its id written back to the slice's element: every other pointer
	// ranged from that slice is an inserted row too.
	ranged := map[*types.Var]*types.Var{} // range value -> the slice it ranges over
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if r, ok := n.(*ast.RangeStmt); ok && r.Value != nil {
			if id, ok := r.Value.(*ast.Ident); ok {
				v, _ := info.ObjectOf(id).(*types.Var)
				if s := rootVar(info, r.X); v != nil && s != nil {
					if _, ptr := v.Type().Underlying().(*types.Pointer); ptr {
						ranged[v] = s
					}
				}
			}
		}
		return true
	})
	slicesInserted := map[*types.Var]bool{}
	for v := range rows {
		if s := ranged[v]; s != nil {
			slicesInserted[s] = true
		}
		if _, ok := v.Type().Underlying().(*types.Slice); ok {
			slicesInserted[v] = true
		}
	}
	isRow := func(v *types.Var) bool { return rows[v] || slicesInserted[ranged[v]] }
	fresh := func(e ast.Expr) bool {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			v, _ := info.Uses[x].(*types.Var)
			return v != nil && ids[v]
		case *ast.SelectorExpr:
			v := rootVar(info, x.X)
			return v != nil && isRow(v) && numberedKey(info, x)
		}
		return false
	}
	keys := read.Stmt.Keys
	if len(keys) > 0 && ins.Via == nil && ins.Stmt.ORM == "" {
		// SQL text: a parameter's column is the one its $n stands under in VALUES.
		for col, arg := range sqlParams(info, ins) {
			if fresh(arg) && slices.Contains(keys, col) {
				return true
			}
		}
		return false
	}
	found := false
	ast.Inspect(ins.Call, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CompositeLit:
			st, ok := info.TypeOf(n).Underlying().(*types.Struct)
			if !ok {
				return true
			}
			for _, elt := range n.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok || !fresh(kv.Value) {
					continue
				}
				k, _ := kv.Key.(*ast.Ident)
				for i := range st.NumFields() {
					if k != nil && st.Field(i).Name() == k.Name && (len(keys) == 0 || slices.Contains(keys, columnOf(k.Name, st.Tag(i)))) {
						found = true
					}
				}
			}
			if found || len(keys) > 0 {
				return false // a literal's fields are judged by their columns
			}
			return true
		case ast.Expr:
			if len(keys) == 0 && fresh(n) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// numberedKey reports x.ID (or the field a tag marks autoincrement) of an integer type:
// the key the database numbers on insert and the ORM writes back.
func numberedKey(info *types.Info, sel *ast.SelectorExpr) bool {
	s, ok := info.Selections[sel]
	if !ok || s.Kind() != types.FieldVal || !isInteger(s.Obj().Type()) {
		return false
	}
	named := modelNamed(s.Recv())
	if named == nil {
		return false
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok || len(s.Index()) != 1 {
		return false
	}
	i := s.Index()[0]
	return strings.EqualFold(st.Field(i).Name(), "id") || generated(st.Tag(i))
}

// rowType reports a (pointer to a) struct, or a slice of them: a value an ORM inserts.
func rowType(t types.Type) bool {
	if isTxHandle(t) {
		return false
	}
	if s, ok := t.Underlying().(*types.Slice); ok {
		t = s.Elem()
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	_, ok := t.Underlying().(*types.Struct)
	return ok
}

// enclosingStmt returns the innermost statement of body holding call.
func enclosingStmt(body *ast.BlockStmt, call *ast.CallExpr) ast.Stmt {
	var out ast.Stmt
	for _, n := range pathTo(body, call) {
		if s, ok := n.(ast.Stmt); ok {
			if _, block := s.(*ast.BlockStmt); !block {
				out = s
			}
		}
	}
	return out
}

// assigned calls f with each variable st assigns or passes by address (id in
// QueryRow(...).Scan(&id), id, err := create(...)).
func assigned(info *types.Info, st ast.Stmt, f func(*types.Var)) {
	visit := func(e ast.Expr) {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if v, ok := info.ObjectOf(id).(*types.Var); ok {
				f(v)
			}
		}
	}
	if as, ok := st.(*ast.AssignStmt); ok && as.Tok != token.ILLEGAL {
		for _, lhs := range as.Lhs {
			visit(lhs)
		}
	}
	ast.Inspect(st, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.AND {
			visit(u.X)
		}
		return true
	})
}

var valuesRE = regexp.MustCompile(`(?is)\bvalues\s*\(([^)]*)\)`)

// sqlParams maps the columns of an INSERT sent as SQL text to the arguments their $n
// placeholders stand for: INSERT INTO t (a, b) VALUES ($1, $2) with args x, y gives
// a: x, b: y.
func sqlParams(info *types.Info, ins *effects.SQLOp) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	m := valuesRE.FindStringSubmatch(ins.Stmt.Text)
	if m == nil {
		return out
	}
	at := -1 // the SQL's argument
	for i, a := range ins.Call.Args {
		if tv, ok := info.Types[a]; ok && tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == ins.Stmt.Text {
			at = i
			break
		}
	}
	if at < 0 {
		return out
	}
	for i, item := range strings.Split(m[1], ",") {
		item = strings.TrimSpace(item)
		n, err := strconv.Atoi(strings.TrimPrefix(item, "$"))
		if !strings.HasPrefix(item, "$") || err != nil || i >= len(ins.Stmt.Columns) || at+n >= len(ins.Call.Args) {
			continue
		}
		out[ins.Stmt.Columns[i]] = ins.Call.Args[at+n]
	}
	return out
}
