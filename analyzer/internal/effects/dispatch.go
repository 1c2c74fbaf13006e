package effects

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/types/typeutil"
)

// deadDispatch removes the effects of the package's dispatchers that no call selects. A
// dispatcher makes each of its effects only in a branch on one parameter equal to a
// constant (`if by == ByEmail { return sendEmail(..) }`, or a switch's case): which
// effect happens is its caller's choice. When every call of it in the module, here and
// in the packages that import it, passes a constant that no branch takes (Notify(ByAll,
// ..) where only ByEmail and ByPusher are handled), those effects never happen, and the
// function is no effect. A call passing anything else may select one, and keeps them.
// Not a dispatcher: a function that calls itself, assigns the parameter or takes its
// address, or falls through a case; a method whose other packages' calls are matched
// by name alone. A function of another package used as a value (not called) is not
// seen by the caller index: such a use keeps no effect alive.
func (s *scanner) deadDispatch() {
	var idx *callerIndex
	loaded := false
	for _, fn := range s.res.Funcs {
		if fn.Test || fn.ValueRef || len(fn.handedCallers) > 0 || fn.Directive != nil {
			continue
		}
		if fn.Obj.Signature().Recv() != nil && exportedAPI(fn.Obj) {
			continue // other packages' calls of a method are matched by name alone
		}
		param, values, guarded, ok := s.dispatch(fn)
		if !ok {
			continue
		}
		sel := func(v constant.Value) bool {
			for _, w := range values {
				if v.Kind() != w.Kind() || constant.Compare(v, token.EQL, w) {
					return true // a value of another kind may select anything
				}
			}
			return false
		}
		dead := len(fn.callers) > 0
		for _, e := range fn.callers {
			if param >= len(e.call.Args) {
				dead = false
				break
			}
			tv := s.pass.TypesInfo.Types[e.call.Args[param]]
			if tv.Value == nil || sel(tv.Value) {
				dead = false
				break
			}
		}
		if exportedAPI(fn.Obj) && inModule(s.pass) {
			if !loaded {
				idx, loaded = moduleCallers(s.pass), true
			}
			if idx == nil {
				continue
			}
			calls := idx.external(s.pass.Pkg.Path(), fn)
			dead = dead || len(fn.callers) == 0 && len(calls) > 0
			for _, c := range calls {
				v := s.indexConst(c, param)
				if v == nil || sel(v) {
					dead = false
					break
				}
			}
		}
		if !dead {
			continue
		}
		kept := fn.Sites[:0]
		for _, site := range fn.Sites {
			if !guarded[site.Call] {
				kept = append(kept, site)
			}
		}
		fn.Sites = kept
		for _, e := range fn.calls {
			if guarded[e.call] {
				e.inert = true
			}
		}
	}
}

// dispatch reports whether every effect of fn (an unguarded site, or a call of a
// function of the package that reaches one) is made in a branch on the same parameter
// equal to a constant; it returns the parameter, the constants the branches take and
// the calls they hold.
func (s *scanner) dispatch(fn *Func) (int, []constant.Value, map[*ast.CallExpr]bool, bool) {
	var calls []*ast.CallExpr
	for _, site := range fn.Sites {
		if site.Unguarded() {
			calls = append(calls, site.Call)
		}
	}
	for _, e := range fn.calls {
		if !e.inert && len(s.classes[e.to]) > 0 {
			calls = append(calls, e.call)
		}
	}
	if len(calls) == 0 || s.callsItself(fn) {
		return 0, nil, nil, false
	}
	param := -1
	var values []constant.Value
	guarded := map[*ast.CallExpr]bool{}
	for _, call := range calls {
		p, vs := s.branchOn(fn, call)
		if p < 0 || param >= 0 && p != param {
			return 0, nil, nil, false
		}
		param = p
		values = append(values, vs...)
		guarded[call] = true
	}
	if s.changesParam(fn, param) {
		return 0, nil, nil, false
	}
	return param, values, guarded, true
}

// callsItself reports whether fn's body calls fn: a dispatcher that calls itself with
// another constant selects a branch no caller's argument shows.
func (s *scanner) callsItself(fn *Func) bool {
	found := false
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func); ok && callee.Origin() == fn.Obj {
				found = true
			}
		}
		return !found
	})
	return found
}

// changesParam reports whether fn's body assigns parameter i, takes its address, or
// holds a fallthrough: the branch a caller's argument selects is then not the one the
// argument names.
func (s *scanner) changesParam(fn *Func, i int) bool {
	v := fn.Obj.Signature().Params().At(i)
	info := s.pass.TypesInfo
	found := false
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
					found = true
				}
			}
		case *ast.IncDecStmt:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && info.ObjectOf(id) == v {
				found = true
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND && info.ObjectOf(id) == v {
				found = true
			}
		case *ast.BranchStmt:
			found = found || n.Tok == token.FALLTHROUGH
		}
		return !found
	})
	return found
}

// branchOn finds the branch of fn's body that holds call and tests a parameter against
// constants: `if p == C` (the call in its body) or a switch on p (the call in a case
// that lists constants). It returns the parameter's index and the constants, or -1.
func (s *scanner) branchOn(fn *Func, call *ast.CallExpr) (int, []constant.Value) {
	path, _ := astutil.PathEnclosingInterval(fn.File, call.Pos(), call.End())
	info := s.pass.TypesInfo
	param := func(e ast.Expr) int {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return -1
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok {
			return -1
		}
		return paramIndex(fn.Obj, v)
	}
	value := func(e ast.Expr) constant.Value {
		if tv, ok := info.Types[e]; ok {
			return tv.Value
		}
		return nil
	}
	for i, n := range path {
		if n == fn.Decl.Body {
			break
		}
		switch n := n.(type) {
		case *ast.IfStmt:
			if i == 0 || path[i-1] != n.Body {
				continue // the condition, or the else branch
			}
			b, ok := ast.Unparen(n.Cond).(*ast.BinaryExpr)
			if !ok || b.Op != token.EQL {
				continue
			}
			if p, v := param(b.X), value(b.Y); p >= 0 && v != nil {
				return p, []constant.Value{v}
			}
			if p, v := param(b.Y), value(b.X); p >= 0 && v != nil {
				return p, []constant.Value{v}
			}
		case *ast.CaseClause:
			if len(n.List) == 0 || i+2 >= len(path) {
				continue // default
			}
			sw, ok := path[i+2].(*ast.SwitchStmt)
			if !ok || sw.Tag == nil || sw.Init != nil {
				continue
			}
			p := param(sw.Tag)
			if p < 0 {
				continue
			}
			var vs []constant.Value
			for _, e := range n.List {
				v := value(e)
				if v == nil {
					return -1, nil
				}
				vs = append(vs, v)
			}
			return p, vs
		}
	}
	return -1, nil
}

// indexConst returns the constant a call read by the caller index passes as argument i:
// a literal, or a constant of this package selected through its import; nil otherwise.
func (s *scanner) indexConst(c indexCall, i int) constant.Value {
	if i >= len(c.args) || c.args[i] == "" {
		return nil
	}
	a := c.args[i]
	if dot := strings.LastIndexByte(a, '.'); dot > 0 && !strings.HasPrefix(a, "\"") && !strings.HasPrefix(a, "`") {
		if a[:dot] != s.pass.Pkg.Path() {
			return nil
		}
		k, ok := s.pass.Pkg.Scope().Lookup(a[dot+1:]).(*types.Const)
		if !ok {
			return nil
		}
		return k.Val()
	}
	for _, kind := range []token.Token{token.STRING, token.INT, token.FLOAT, token.CHAR} {
		if v := constant.MakeFromLiteral(a, kind, 0); v.Kind() != constant.Unknown {
			return v
		}
	}
	return nil
}
