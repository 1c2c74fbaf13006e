package once005

import (
	"go/ast"
	"go/token"
	"go/types"
)

// decides reports whether what the call read returns decides, in an if or a switch
// before the call insert, whether to go on to it: a condition on the row found or not, a
// count, a flag. The bare error check (err != nil) does not count: it gives up on a
// failed read, and code that reads one row to copy it into another decides nothing with
// it.
//
// What the read returns is followed through the variables its statement assigns or
// scans into, and on through assignments, calls that scan into variables (rows.Scan) and
// range loops, up to the insert.
func decides(info *types.Info, body *ast.BlockStmt, read, insert *ast.CallExpr) bool {
	path := pathTo(body, read)
	var stmt, header ast.Stmt // the statement holding the read; the if or switch it heads
	for i := len(path) - 1; i >= 0 && header == nil; i-- {
		var child ast.Node
		if i+1 < len(path) {
			child = path[i+1]
		}
		switch n := path[i].(type) {
		case *ast.IfStmt:
			if child != nil && (child == n.Init || child == n.Cond) {
				header = n
			}
		case *ast.SwitchStmt:
			if child != nil && (child == n.Init || child == n.Tag) {
				header = n
			}
		}
		if s, ok := path[i].(ast.Stmt); ok && stmt == nil {
			stmt = s
		}
	}
	if stmt == nil {
		return false
	}
	tainted := map[types.Object]bool{}
	if stmt == header {
		// The read is the condition itself: if s.exists(ctx, key) { ... }.
		return header.Pos() < insert.Pos()
	}
	bind(info, stmt, tainted)

	// Follow the values to the insert, twice round for loops.
	from, to := stmt.End(), insert.Pos()
	if header != nil {
		from = header.Pos()
	}
	for range 2 {
		ast.Inspect(body, func(n ast.Node) bool {
			if n == nil || n.End() < from || n.Pos() > to {
				return false
			}
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, rhs := range n.Rhs {
					if mentions(info, rhs, tainted) {
						for _, lhs := range n.Lhs {
							taint(info, lhs, tainted)
						}
					}
				}
			case *ast.ValueSpec:
				for _, v := range n.Values {
					if mentions(info, v, tainted) {
						for _, name := range n.Names {
							taint(info, name, tainted)
						}
					}
				}
			case *ast.RangeStmt:
				if mentions(info, n.X, tainted) {
					taint(info, n.Key, tainted)
					taint(info, n.Value, tainted)
				}
			case *ast.CallExpr:
				recv := false
				if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
					recv = mentions(info, sel.X, tainted)
				}
				if recv || anyMentions(info, n.Args, tainted) {
					for _, arg := range n.Args {
						if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
							taint(info, u.X, tainted)
						}
					}
				}
			}
			return true
		})
	}

	// An if or switch between the read and the insert that tests the values, and
	// controls whether the insert runs: it holds the insert, or it stands in a block
	// that holds it (where a return or continue in it skips the insert). A test in
	// another loop, over by the time the insert runs, decides nothing about it.
	found := false
	var blocks []ast.Node // the blocks enclosing the node visited
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			blocks = blocks[:len(blocks)-1]
			return true
		}
		if found || n.Pos() > to || n.End() < from {
			return false
		}
		controls := func() bool {
			if n.Pos() <= insert.Pos() && insert.End() <= n.End() {
				return true
			}
			for i := len(blocks) - 1; i >= 0; i-- {
				if b := blocks[i]; b != nil {
					return b.Pos() <= insert.Pos() && insert.End() <= b.End()
				}
			}
			return false
		}
		switch n := n.(type) {
		case *ast.IfStmt:
			found = n.Pos() >= from && mentions(info, n.Cond, tainted) && controls()
		case *ast.SwitchStmt:
			if n.Pos() >= from && controls() {
				found = n.Tag != nil && mentions(info, n.Tag, tainted)
				for _, c := range n.Body.List {
					if cc, ok := c.(*ast.CaseClause); ok && anyMentions(info, cc.List, tainted) {
						found = true
					}
				}
			}
		}
		if found {
			return false
		}
		switch n.(type) {
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			blocks = append(blocks, n)
		default:
			blocks = append(blocks, nil) // a marker popped with the node
		}
		return true
	})
	return found
}

// pathTo returns the nodes from root down to target.
func pathTo(root, target ast.Node) []ast.Node {
	var path []ast.Node
	done := false
	ast.Inspect(root, func(n ast.Node) bool {
		if done {
			return false
		}
		if n == nil {
			path = path[:len(path)-1]
			return true
		}
		if n.Pos() > target.Pos() || n.End() < target.End() {
			return false
		}
		path = append(path, n)
		if n == target {
			done = true
			return false
		}
		return true
	})
	return path
}

// bind taints the variables a statement assigns, and those it passes by address
// (Scan(&id, &status)).
func bind(info *types.Info, stmt ast.Stmt, tainted map[types.Object]bool) {
	switch s := stmt.(type) {
	case *ast.AssignStmt:
		for _, lhs := range s.Lhs {
			taint(info, lhs, tainted)
		}
	case *ast.DeclStmt:
		if gd, ok := s.Decl.(*ast.GenDecl); ok {
			for _, spec := range gd.Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					for _, name := range vs.Names {
						taint(info, name, tainted)
					}
				}
			}
		}
	}
	ast.Inspect(stmt, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.AND {
			taint(info, u.X, tainted)
		}
		return true
	})
}

// taint marks the variable at the root of e (x in x, x.f, x[i]).
func taint(info *types.Info, e ast.Expr, tainted map[types.Object]bool) {
	for e != nil {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			if obj := info.ObjectOf(x); obj != nil {
				if _, ok := obj.(*types.Var); ok {
					tainted[obj] = true
				}
			}
			return
		default:
			return
		}
	}
}

func anyMentions(info *types.Info, list []ast.Expr, tainted map[types.Object]bool) bool {
	for _, e := range list {
		if mentions(info, e, tainted) {
			return true
		}
	}
	return false
}

// mentions reports whether e uses a tainted variable, outside a bare error check.
func mentions(info *types.Info, e ast.Expr, tainted map[types.Object]bool) bool {
	if e == nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if errorCheck(info, n) {
				return false
			}
		case *ast.Ident:
			if obj := info.Uses[n]; obj != nil && tainted[obj] {
				found = true
			}
		}
		return true
	})
	return found
}

var errorType = types.Universe.Lookup("error").Type()

// errorCheck reports err != nil (or nil != err) for an error-typed err.
func errorCheck(info *types.Info, b *ast.BinaryExpr) bool {
	if b.Op != token.NEQ {
		return false
	}
	isNil := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		_, isNil := info.Uses[id].(*types.Nil)
		return isNil
	}
	isErr := func(e ast.Expr) bool {
		t := info.TypeOf(e)
		return t != nil && types.Identical(t, errorType)
	}
	return (isNil(b.Y) && isErr(b.X)) || (isNil(b.X) && isErr(b.Y))
}
