package once005

import (
	"go/ast"
	"go/constant"
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
func decides(info *types.Info, body *ast.BlockStmt, read, insert *ast.CallExpr, capsDecide bool) bool {
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
		// The read is the condition itself: if s.exists(ctx, key) { ... }, unless it is
		// only counted against a limit: if s.countOpen(ctx) >= maxOpen { ... }.
		var cond ast.Expr
		switch h := header.(type) {
		case *ast.IfStmt:
			cond = h.Cond
		case *ast.SwitchStmt:
			cond = h.Tag
		}
		if cond != nil && !capsDecide {
			scanned := map[types.Object]bool{} // if q.Scan(&n) != nil || n > 0
			ast.Inspect(cond, func(n ast.Node) bool {
				if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.AND {
					taint(info, u.X, scanned)
				}
				return true
			})
			if onlyCapped(info, cond, func(e ast.Expr) bool { return contains(e, read) || mentions(info, e, scanned) }) {
				return false
			}
		}
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

	// An insert of the very rows the read returned, made only when it found some
	// (if up != nil { up.ID = 0; insert(up) }, if len(rows) > 0 { insert(rows) }),
	// copies what was found: it is not the row a check looked for and did not find.
	copied := false
	for v := range handlesOfValue(info, insert) {
		copied = copied || tainted[v]
	}
	for _, n := range pathTo(body, insert) {
		if ifs, ok := n.(*ast.IfStmt); ok && copied && ifs.Pos() >= from && contains(ifs.Body, insert) && foundTest(info, ifs.Cond, tainted) {
			return false
		}
	}

	// An insert made only on the path where the read found its row (after if t == nil
	// { return }, or inside if t != nil) follows from the row, it does not create an
	// absent one: the read validates (a refresh token looked up before a new token is
	// issued), it does not check for the row the insert makes.
	if onFoundPath(info, body, insert, from, tainted) {
		return false
	}

	// An if or switch between the read and the insert that tests the values, and
	// controls whether the insert runs: it holds the insert, it returns (or, by continue
	// or break, leaves a loop that holds the insert), or it stands in a block that holds
	// the insert. A test in a loop that is over before the insert runs decides nothing
	// about it.
	found := false
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if found || n.Pos() > to || n.End() < from {
			return false
		}
		switch n := n.(type) {
		case *ast.IfStmt:
			found = n.Pos() >= from && tests(info, n.Cond, tainted, capsDecide) && controls(n, stack, insert)
		case *ast.SwitchStmt:
			if n.Pos() >= from && controls(n, stack, insert) {
				found = n.Tag != nil && tests(info, n.Tag, tainted, capsDecide)
				for _, c := range n.Body.List {
					if cc, ok := c.(*ast.CaseClause); ok {
						for _, e := range cc.List {
							found = found || tests(info, e, tainted, capsDecide)
						}
					}
				}
			}
		}
		if found {
			return false
		}
		stack = append(stack, n)
		return true
	})
	return found
}

// contains reports whether n holds the node at pos..end.
func contains(n ast.Node, x ast.Node) bool { return n.Pos() <= x.Pos() && x.End() <= n.End() }

// controls reports whether the branch statement s, whose enclosing nodes are stack,
// decides whether insert runs: it holds it, one of its branches returns, or leaves by
// continue or break a loop that holds it, or it stands in a block that holds it.
func controls(s ast.Stmt, stack []ast.Node, insert *ast.CallExpr) bool {
	if contains(s, insert) {
		return true
	}
	for i := len(stack) - 1; i >= 0; i-- {
		switch b := stack[i].(type) {
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			if contains(b, insert) {
				return true
			}
			i = -1 // only the innermost block
		}
	}
	ret, jump := leaves(s)
	if ret {
		return true
	}
	if jump {
		for i := len(stack) - 1; i >= 0; i-- {
			switch l := stack[i].(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				return contains(l, insert)
			case *ast.FuncLit:
				return false
			}
		}
	}
	return false
}

// leaves reports whether a branch of s returns (or panics), and whether one leaves the
// loop around s by continue or break.
func leaves(s ast.Stmt) (ret, jump bool) {
	var loops, breaks int // loops and breakable statements entered, s itself included
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			ret = true
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "panic" {
				ret = true
			}
		case *ast.BranchStmt:
			switch {
			case n.Label != nil && (n.Tok == token.CONTINUE || n.Tok == token.BREAK):
				jump = true
			case n.Tok == token.CONTINUE && loops == 0, n.Tok == token.BREAK && breaks == 0:
				jump = true
			}
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			_, loop := n.(*ast.ForStmt)
			if _, r := n.(*ast.RangeStmt); r {
				loop = true
			}
			if loop {
				loops++
			}
			breaks++
			ast.Inspect(n, func(m ast.Node) bool {
				if m == n || m == nil {
					return true
				}
				return walk(m)
			})
			if loop {
				loops--
			}
			breaks--
			return false
		}
		return true
	}
	walk(s)
	if _, isIf := s.(*ast.IfStmt); isIf {
		ast.Inspect(s, func(m ast.Node) bool {
			if m == s || m == nil {
				return true
			}
			return walk(m)
		})
	}
	return ret, jump
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

// taint marks the variable at the root of e (x in x, x[i]), or the field x.f.
//
// A value stored into a field (user.ID = nextID) marks the field, not the whole of x:
// a later test of another field (if user.Name == "") does not test what was read. The
// field's object stands for it, so any x.ID of that type counts as holding the value.
func taint(info *types.Info, e ast.Expr, tainted map[types.Object]bool) {
	if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
		if s, ok := info.Selections[sel]; ok && s.Kind() == types.FieldVal {
			tainted[s.Obj()] = true
			return
		}
	}
	if v := rootVar(info, e); v != nil {
		tainted[v] = true
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

// foundTest reports a condition that holds when the read found something: x != nil,
// len(x) > 0 (or != 0, >= 1), alone or in a conjunction, for a value the read returned.
func foundTest(info *types.Info, cond ast.Expr, tainted map[types.Object]bool) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if b.Op == token.LAND {
		return foundTest(info, b.X, tainted) || foundTest(info, b.Y, tainted)
	}
	isNil := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		_, isNil := info.Uses[id].(*types.Nil)
		return isNil
	}
	isLen := func(e ast.Expr) bool {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return false
		}
		id, ok := ast.Unparen(call.Fun).(*ast.Ident)
		if !ok {
			return false
		}
		_, builtin := info.Uses[id].(*types.Builtin)
		return builtin && id.Name == "len" && mentions(info, call.Args[0], tainted)
	}
	constInt := func(e ast.Expr, v int64) bool {
		tv, ok := info.Types[e]
		if !ok || tv.Value == nil {
			return false
		}
		n, exact := constant.Int64Val(constant.ToInt(tv.Value))
		return exact && n == v
	}
	switch b.Op {
	case token.NEQ:
		if isNil(b.Y) && !errorCheck(info, b) {
			return mentions(info, b.X, tainted)
		}
		if isNil(b.X) && !errorCheck(info, b) {
			return mentions(info, b.Y, tainted)
		}
		return (isLen(b.X) && constInt(b.Y, 0)) || (isLen(b.Y) && constInt(b.X, 0))
	case token.GTR:
		return isLen(b.X) && constInt(b.Y, 0)
	case token.GEQ:
		return isLen(b.X) && constInt(b.Y, 1)
	case token.LSS:
		return isLen(b.Y) && constInt(b.X, 0)
	}
	return false
}

// tests reports whether cond tests what the read returned other than against a limit
// (see capTest): a count held under a cap decides how many rows there may be, not
// whether the one the insert makes already exists. Where caps decide (an upsert that
// adds to a total the read compared with its limit), any test counts.
func tests(info *types.Info, cond ast.Expr, tainted map[types.Object]bool, capsDecide bool) bool {
	if capsDecide {
		return mentions(info, cond, tainted)
	}
	return mentions(info, cond, tainted) && !onlyCapped(info, cond, func(e ast.Expr) bool { return mentions(info, e, tainted) })
}

// onlyCapped reports whether every part of cond that holds what the read returned
// (read reports such a part) stands in a comparison with a limit.
func onlyCapped(info *types.Info, cond ast.Expr, read func(ast.Expr) bool) bool {
	free := false // a use of the read's value outside a cap
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		if free || e == nil || !read(e) {
			return
		}
		switch x := ast.Unparen(e).(type) {
		case *ast.BinaryExpr:
			switch {
			case x.Op == token.LAND || x.Op == token.LOR:
				walk(x.X)
				walk(x.Y)
			case errorCheck(info, x):
			case capTest(info, x, read):
			default:
				free = true
			}
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				walk(x.X)
				return
			}
			free = true
		default:
			free = true
		}
	}
	walk(cond)
	return !free
}

// capTest reports a comparison of a count the read returned with a limit that lets
// more than one row through: n >= max, len(rows) > limit, n < cfg.Limit. The count is an
// integer the read returned (a COUNT scanned into n, len of the rows found); the limit
// is anything that does not come from the read, and when it is a constant, one that
// allows two rows or more (n >= 2, n > 1): n > 0, n >= 1 and n == 0 ask whether a row
// exists, which is the check this analyzer is about. A limit of one row is that same
// check, whatever its name.
func capTest(info *types.Info, b *ast.BinaryExpr, read func(ast.Expr) bool) bool {
	op := b.Op
	count, limit := b.X, b.Y
	if !read(count) {
		count, limit = limit, count
		switch op { // mirror: max <= n is n >= max
		case token.LSS:
			op = token.GTR
		case token.LEQ:
			op = token.GEQ
		case token.GTR:
			op = token.LSS
		case token.GEQ:
			op = token.LEQ
		}
	}
	if read(limit) || !countOf(info, count, read) {
		return false
	}
	var allowed int64 // the rows the comparison lets there be before it refuses
	tv, ok := info.Types[limit]
	if !ok || tv.Value == nil {
		return op == token.LSS || op == token.LEQ || op == token.GTR || op == token.GEQ
	}
	n, exact := constant.Int64Val(constant.ToInt(tv.Value))
	if !exact {
		return false
	}
	switch op {
	case token.GEQ, token.LSS: // refuses at n >= limit
		allowed = n
	case token.GTR, token.LEQ: // refuses at n > limit
		allowed = n + 1
	default:
		return false
	}
	return allowed >= 2
}

// countOf reports a count the read returned: len of what it returned, or an integer
// variable it set (a COUNT scanned into n). A field (m.Seq = last.Seq + 1) is a value of
// the row, not a count of rows.
func countOf(info *types.Info, e ast.Expr, read func(ast.Expr) bool) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := info.Uses[e].(*types.Var)
		return ok && !v.IsField() && read(e) && isInteger(v.Type())
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok && len(e.Args) == 1 {
			if _, builtin := info.Uses[id].(*types.Builtin); builtin && id.Name == "len" {
				return read(e.Args[0])
			}
		}
		return read(e) && isInteger(info.TypeOf(e)) // s.countPending(ctx, u), in the condition itself
	}
	return false
}

func isInteger(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// onFoundPath reports whether insert runs only where the read found something: it sits
// in the branch of an if (after from) whose condition holds only when it did (x != nil,
// len(rows) > 0, n > 0 for a count), or in the else of one that holds only when it did
// not, or after an if that leaves (return, panic, continue, break) when it did not
// (if err != nil || x == nil { return ... }). A test of a bool says nothing here: its
// name, not its type, would say which way it points.
func onFoundPath(info *types.Info, body *ast.BlockStmt, insert *ast.CallExpr, from token.Pos, tainted map[types.Object]bool) bool {
	path := pathTo(body, insert)
	for i, n := range path {
		switch n := n.(type) {
		case *ast.IfStmt:
			if n.Pos() < from {
				continue
			}
			if contains(n.Body, insert) && foundIf(info, n.Cond, true, tainted) {
				return true
			}
			if n.Else != nil && contains(n.Else, insert) && foundIf(info, n.Cond, false, tainted) {
				return true
			}
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			var list []ast.Stmt
			switch b := n.(type) {
			case *ast.BlockStmt:
				list = b.List
			case *ast.CaseClause:
				list = b.Body
			case *ast.CommClause:
				list = b.Body
			}
			if i+1 >= len(path) {
				continue
			}
			for _, st := range list {
				if st.Pos() >= path[i+1].Pos() {
					break
				}
				ifs, ok := st.(*ast.IfStmt)
				if !ok || ifs.Pos() < from {
					continue
				}
				if terminates(ifs.Body) && foundIf(info, ifs.Cond, false, tainted) {
					return true
				}
				if ifs.Else != nil && terminates(ifs.Else) && foundIf(info, ifs.Cond, true, tainted) {
					return true
				}
			}
		}
	}
	return false
}

// terminates reports whether a block (or an else branch) ends by leaving: a return, a
// panic, a continue, break or goto, or an if whose branches all do.
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminates(s.List[len(s.List)-1])
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		call, ok := s.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := ast.Unparen(call.Fun).(*ast.Ident)
		return ok && id.Name == "panic"
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Body) && terminates(s.Else)
	}
	return false
}

// foundIf reports whether cond having the value val means the read found something:
// x != nil, len(rows) > 0 or n > 0 (for a count n) true; x == nil, len(rows) == 0 or
// n == 0 false; through !, && and ||.
func foundIf(info *types.Info, cond ast.Expr, val bool, tainted map[types.Object]bool) bool {
	switch c := ast.Unparen(cond).(type) {
	case *ast.UnaryExpr:
		return c.Op == token.NOT && foundIf(info, c.X, !val, tainted)
	case *ast.BinaryExpr:
		switch c.Op {
		case token.LAND:
			if val {
				return foundIf(info, c.X, true, tainted) || foundIf(info, c.Y, true, tainted)
			}
			return foundIf(info, c.X, false, tainted) && foundIf(info, c.Y, false, tainted)
		case token.LOR:
			if val {
				return foundIf(info, c.X, true, tainted) && foundIf(info, c.Y, true, tainted)
			}
			return foundIf(info, c.X, false, tainted) || foundIf(info, c.Y, false, tainted)
		}
		if errorCheck(info, c) {
			return false
		}
		if foundTest(info, c, tainted) || countFound(info, c, tainted) {
			return val
		}
		if absentTest(info, c, tainted) {
			return !val
		}
	}
	return false
}

// absentTest reports x == nil, len(x) == 0 (or < 1) or n == 0 (or < 1, <= 0) for a value
// the read returned (not an error).
func absentTest(info *types.Info, b *ast.BinaryExpr, tainted map[types.Object]bool) bool {
	if b.Op == token.EQL {
		for _, pair := range [][2]ast.Expr{{b.X, b.Y}, {b.Y, b.X}} {
			v, other := pair[0], pair[1]
			if isNilIdent(info, other) && !isError(info, v) && mentions(info, v, tainted) {
				return true
			}
		}
	}
	x, y, op := countFirst(info, b)
	if !counted(info, x, tainted) {
		return false
	}
	switch op {
	case token.EQL, token.LEQ:
		return constIntIs(info, y, 0)
	case token.LSS:
		return constIntIs(info, y, 1)
	}
	return false
}

// countFound reports n > 0, n != 0 or n >= 1 for a count n the read returned.
func countFound(info *types.Info, b *ast.BinaryExpr, tainted map[types.Object]bool) bool {
	x, y, op := countFirst(info, b)
	if !counted(info, x, tainted) {
		return false
	}
	switch op {
	case token.GTR, token.NEQ:
		return constIntIs(info, y, 0)
	case token.GEQ:
		return constIntIs(info, y, 1)
	}
	return false
}

// countFirst returns a comparison with a constant 0 or 1 written first (0 == n, 1 > n) as
// the same comparison with the count first (n == 0, n < 1).
func countFirst(info *types.Info, b *ast.BinaryExpr) (x, y ast.Expr, op token.Token) {
	x, y, op = b.X, b.Y, b.Op
	if !constIntIs(info, x, 0) && !constIntIs(info, x, 1) {
		return x, y, op
	}
	if m, ok := mirrored[op]; ok {
		op = m
	}
	return y, x, op
}

// mirrored is the comparison that holds with its operands swapped.
var mirrored = map[token.Token]token.Token{token.GTR: token.LSS, token.LSS: token.GTR, token.GEQ: token.LEQ, token.LEQ: token.GEQ}

// counted reports len(x) of a value the read returned, or an integer variable the read
// set (a count scanned into n): not a field of the row, whose meaning its name holds.
func counted(info *types.Info, e ast.Expr, tainted map[types.Object]bool) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		obj := info.Uses[e]
		return obj != nil && tainted[obj] && isInteger(obj.Type())
	case *ast.CallExpr:
		id, ok := ast.Unparen(e.Fun).(*ast.Ident)
		if !ok || len(e.Args) != 1 {
			return false
		}
		_, builtin := info.Uses[id].(*types.Builtin)
		return builtin && id.Name == "len" && mentions(info, e.Args[0], tainted)
	}
	return false
}

func constIntIs(info *types.Info, e ast.Expr, v int64) bool {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return false
	}
	n, exact := constant.Int64Val(constant.ToInt(tv.Value))
	return exact && n == v
}

func isNilIdent(info *types.Info, e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	_, isNil := info.Uses[id].(*types.Nil)
	return isNil
}

func isError(info *types.Info, e ast.Expr) bool {
	t := info.TypeOf(e)
	return t != nil && types.Identical(t, errorType)
}
