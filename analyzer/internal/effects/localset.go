package effects

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// setOp is one read or write of a long-lived set.
type setOp struct {
	obj   *types.Var // the package-level variable or struct field
	name  string
	node  ast.Node
	check bool
	write bool
	value *types.Var // for a check, the variable the looked-up value is assigned to
}

// checkMethods and writeMethods name the methods of sync.Map and of set types (a named
// type with both a check and a write method) that read or write membership.
var (
	checkMethods = map[string]bool{"Load": true, "LoadOrStore": true, "Contains": true, "Has": true, "Exists": true, "Includes": true, "IsMember": true}
	writeMethods = map[string]bool{"Store": true, "LoadOrStore": true, "Swap": true, "Add": true, "Insert": true, "Put": true, "Set": true}
)

// findLocalGuards finds, in each function not covered by a promise, a long-lived map or
// set that is checked (in a condition or an assignment) before an unguarded effect and
// written in the same function: a guard that lasts one process.
//
// Where no effect follows the check, an insert can be what the set guards: the in-process
// lock around "insert a run row" (check the set, add to it, insert, delete from it). The
// set must then be a set (sync.Map, a set type, or a map to bool or struct{}: a map of
// times or counts throttles or counts, it does not claim), the insert a plain one into a
// table no directive declares, and the function must send no statement that is a claim
// of its own before the insert (an insert with ON CONFLICT, a lock, a row locked FOR
// UPDATE, an update, a serializable transaction): with one the set is only a cache in
// front of it.
func (s *scanner) findLocalGuards() {
	for _, fn := range s.res.Funcs {
		if fn.Test || fn.Covered || fn.Directive != nil {
			continue
		}
		var sites []*Site
		for _, site := range fn.Sites {
			if site.Unguarded() {
				sites = append(sites, site)
			}
		}
		inserts := s.guardableInserts(fn)
		if len(sites) == 0 && len(inserts) == 0 {
			continue
		}
		ops := s.setOps(fn)
		if len(ops) == 0 {
			continue
		}
		for _, c := range ops {
			if !c.check {
				continue
			}
			var write token.Pos
			for _, w := range ops {
				if w.write && w.obj == c.obj {
					write = w.node.Pos()
					break
				}
			}
			if !write.IsValid() {
				continue
			}
			g := &LocalGuard{Func: fn, Set: c.name, Check: c.node, Write: write}
			for _, site := range sites {
				if site.Call.Pos() > c.node.Pos() && (g.Site == nil || site.Call.Pos() < g.Site.Call.Pos()) && !s.uses(site.Call, c.value) {
					g.Site = site
				}
			}
			if g.Site == nil && isSet(c.obj.Type()) {
				for _, op := range inserts {
					if op.Call.Pos() > c.node.Pos() {
						g.Insert = op
						break
					}
				}
			}
			if g.Site == nil && g.Insert == nil {
				continue
			}
			if at := g.Call(); at != nil && fallsThrough(fn.Decl.Body, c.node, at) {
				continue
			}
			s.res.LocalGuards = append(s.res.LocalGuards, g)
			break
		}
	}
}

// Call returns the guarded effect's call, or the insert's.
func (g *LocalGuard) Call() *ast.CallExpr {
	switch {
	case g.Site != nil:
		return g.Site.Call
	case g.Insert != nil:
		return g.Insert.Call
	}
	return nil
}

// fallsThrough reports a check in the condition (or init) of an if statement whose
// branches all go on to the statement after it, where the effect is: the effect runs
// whatever the set held (a registry of cancel functions, where a key found cancels the
// earlier run and the call goes ahead), so the set guards nothing.
func fallsThrough(body *ast.BlockStmt, check ast.Node, effect *ast.CallExpr) bool {
	var ifs *ast.IfStmt
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil || ifs != nil {
			return false
		}
		if st, ok := n.(*ast.IfStmt); ok && (within(st.Cond, check) || st.Init != nil && within(st.Init, check)) {
			ifs = st
			return false
		}
		return n.Pos() <= check.Pos() && check.End() <= n.End()
	})
	if ifs == nil || within(ifs.Body, effect) || ifs.Else != nil && within(ifs.Else, effect) {
		return false
	}
	return !terminates(ifs.Body) && (ifs.Else == nil || !terminates(ifs.Else))
}

func within(outer, inner ast.Node) bool {
	return outer.Pos() <= inner.Pos() && inner.End() <= outer.End()
}

// terminates reports a branch whose last statement leaves it: a return, a break, continue
// or goto, or a panic.
func terminates(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.BlockStmt:
		return len(st.List) > 0 && terminates(st.List[len(st.List)-1])
	case *ast.IfStmt:
		return terminates(st.Body) && st.Else != nil && terminates(st.Else)
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		if call, ok := st.X.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	}
	return false
}

// uses reports whether call mentions v. A map whose looked-up value the effect then uses
// (the client cached per account, through which the text is sent) caches what the effect
// needs: the effect happens whether or not the value was there, so the map guards nothing.
func (s *scanner) uses(call *ast.CallExpr, v *types.Var) bool {
	if v == nil {
		return false
	}
	found := false
	ast.Inspect(call, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && s.pass.TypesInfo.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// guardableInserts returns fn's plain inserts that no claim of fn's own precedes.
func (s *scanner) guardableInserts(fn *Func) []*SQLOp {
	if fn.Serializable {
		return nil
	}
	var out []*SQLOp
	for i := range fn.SQL {
		op := &fn.SQL[i]
		if op.Guarded {
			continue
		}
		st := op.Stmt
		switch {
		case st.Kind == sqltext.Lock, st.Kind == sqltext.Update, st.Kind == sqltext.Read && st.RowLock,
			st.Kind == sqltext.Insert && st.OnConflict:
			return out // a claim: what follows is guarded by it
		case st.Kind == sqltext.Insert && !s.res.Declared(st.Table):
			out = append(out, op)
		}
	}
	return out
}

// isSet reports a type that holds membership only: sync.Map, a set type, or a map whose
// values are bool or struct{}.
func isSet(t types.Type) bool {
	if isSyncMap(t) || isSetType(t) {
		return true
	}
	m, ok := t.Underlying().(*types.Map)
	if !ok {
		return false
	}
	switch e := m.Elem().Underlying().(type) {
	case *types.Basic:
		return e.Kind() == types.Bool
	case *types.Struct:
		return e.NumFields() == 0
	}
	return false
}

// setOps lists the reads and writes of long-lived sets in fn, in source order. A read
// counts as a check only in a condition or the right side of an assignment.
func (s *scanner) setOps(fn *Func) []setOp {
	info := s.pass.TypesInfo
	var recv *types.Var
	if fn.Obj.Signature().Recv() != nil {
		recv = fn.Obj.Signature().Recv()
	}
	var ops []setOp
	var stack []ast.Node
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.IndexExpr:
			obj, name := s.longLived(n.X, recv)
			if obj == nil {
				return true
			}
			if _, isMap := obj.Type().Underlying().(*types.Map); !isMap {
				return true
			}
			if isAssigned(stack, n) {
				ops = append(ops, setOp{obj: obj, name: name, node: n, write: true})
			} else if inCondition(stack) {
				ops = append(ops, setOp{obj: obj, name: name, node: n, check: true, value: s.assignedTo(stack)})
			}
		case *ast.CallExpr:
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if !ok {
				return true
			}
			obj, name := s.longLived(sel.X, recv)
			cache := isGoCache(info.TypeOf(sel.X))
			if obj == nil || !isSetType(info.TypeOf(sel.X)) && !cache {
				return true
			}
			m := sel.Sel.Name
			op := setOp{obj: obj, name: name, node: n, check: checkMethods[m] && inCondition(stack), write: writeMethods[m], value: s.assignedTo(stack)}
			if m == "LoadOrStore" { // checks and writes in one call
				op.check = true
			}
			if cache {
				op.check, op.write = goCacheOp(info, n, m, inCondition(stack))
			}
			if op.check || op.write {
				ops = append(ops, op)
			}
		}
		return true
	})
	return ops
}

// assignedTo returns the variable the top of stack is assigned to as the first value of
// an assignment (c in c, ok := clients[k]), or nil.
func (s *scanner) assignedTo(stack []ast.Node) *types.Var {
	if len(stack) < 2 {
		return nil
	}
	as, ok := stack[len(stack)-2].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 || as.Rhs[0] != stack[len(stack)-1] || len(as.Lhs) == 0 {
		return nil
	}
	id, ok := as.Lhs[0].(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := s.pass.TypesInfo.ObjectOf(id).(*types.Var)
	return v
}

// longLived resolves e to a package-level variable or a field reached through fn's
// receiver (or a package-level variable), and names it for messages.
func (s *scanner) longLived(e ast.Expr, recv *types.Var) (*types.Var, string) {
	info := s.pass.TypesInfo
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if ok && v.Pkg() == s.pass.Pkg && v.Parent() == s.pass.Pkg.Scope() {
			return v, "package-level " + kindOf(v.Type()) + " " + v.Name()
		}
	case *ast.SelectorExpr:
		sel, ok := info.Selections[x]
		if !ok || sel.Kind() != types.FieldVal {
			return nil, ""
		}
		root := x.X
		for {
			if s2, ok := ast.Unparen(root).(*ast.SelectorExpr); ok {
				root = s2.X
				continue
			}
			break
		}
		id, ok := ast.Unparen(root).(*ast.Ident)
		if !ok {
			return nil, ""
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok {
			return nil, ""
		}
		if (recv != nil && v == recv) || (v.Pkg() == s.pass.Pkg && v.Parent() == s.pass.Pkg.Scope()) {
			field := sel.Obj().(*types.Var)
			return field, kindOf(field.Type()) + " field " + types.ExprString(x)
		}
	}
	return nil, ""
}

// kindOf says "map", "sync.Map", "go-cache" or "set" for messages.
func kindOf(t types.Type) string {
	if isGoCache(t) {
		return "go-cache"
	}
	if isSyncMap(t) {
		return "sync.Map"
	}
	if _, ok := t.Underlying().(*types.Map); ok {
		return "map"
	}
	return "set"
}

// isSyncMap reports whether t is sync.Map or a pointer to it.
func isSyncMap(t types.Type) bool { return namedIn(t, "sync", "Map") }

// isSetType reports sync.Map, or a named type with both a membership check and an add
// method (a set package's Set).
func isSetType(t types.Type) bool {
	if t == nil {
		return false
	}
	if isSyncMap(t) {
		return true
	}
	ms := types.NewMethodSet(t)
	if _, ok := t.(*types.Pointer); !ok {
		ms = types.NewMethodSet(types.NewPointer(t))
	}
	var check, add bool
	for i := range ms.Len() {
		name := ms.At(i).Obj().Name()
		check = check || (checkMethods[name] && name != "Load")
		add = add || (name == "Add" || name == "Insert")
	}
	return check && add
}

// isAssigned reports whether the top of stack (n) is written: the left side of an
// assignment or an inc/dec statement.
func isAssigned(stack []ast.Node, n ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	switch p := stack[len(stack)-2].(type) {
	case *ast.AssignStmt:
		for _, lhs := range p.Lhs {
			if lhs == n {
				return true
			}
		}
	case *ast.IncDecStmt:
		return p.X == n
	}
	return false
}

// inCondition reports whether the top of stack is read to decide: inside an if or switch
// header, or the right side of an assignment (v, ok := m[k]; if ok ...).
func inCondition(stack []ast.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.IfStmt:
			child := stack[i+1]
			return child == p.Cond || child == p.Init
		case *ast.SwitchStmt:
			child := stack[i+1]
			return child == p.Tag || child == p.Init
		case *ast.AssignStmt, *ast.ValueSpec:
			return true
		case *ast.BlockStmt, *ast.FuncLit, *ast.ExprStmt:
			return false
		}
	}
	return false
}
