package once001

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/once002"
)

// resent reports whether the effects of sites are messages a second request means to
// send again: each email or text carries a secret minted for it (a one-time code or
// link, from a random source in the function, or handed to it by every caller in the
// package), and no code before the send tests the clock. The new code replaces the one
// sent before, so a second click is a resend by design, not a repeat. A test of the clock
// (a resend interval: sentAt.Add(freq).After(time.Now())) in the function, in a function
// of the package it calls before the send, or in a caller before its call, says the code
// means to refuse a second send within the interval, which two requests pass together:
// that is reported.
func resent(info *types.Info, tr *once002.Tracer, res *effects.Result, fn *effects.Func, sites []*effects.Site) bool {
	if tr == nil || len(sites) == 0 {
		return false
	}
	fresh := freshParams(tr, fn)
	first := sites[0].Call.Pos()
	for _, site := range sites {
		if site.Class != "email" && site.Class != "message" {
			return false
		}
		if !mintedFor(info, tr, fn, site.Call, fresh) {
			return false
		}
		first = min(first, site.Call.Pos())
	}
	seen := map[*effects.Func]bool{}
	if testsClock(info, tr, res, fn, first, seen) {
		return false
	}
	for _, c := range fn.Callers() {
		if testsClock(info, tr, res, c.From, c.Call.Pos(), seen) {
			return false
		}
	}
	return true
}

// mintedFor reports whether an argument of call is derived from a random source, in fn or
// through one of fn's fresh parameters.
func mintedFor(info *types.Info, tr *once002.Tracer, fn *effects.Func, call *ast.CallExpr, fresh map[*types.Var]bool) bool {
	body := fn.Decl.Body
	for _, arg := range call.Args {
		if src := tr.Source(body, arg); src != "" && !once002.Clock(src) {
			return true
		}
	}
	if len(fresh) == 0 {
		return false
	}
	// The parameters' values, followed through the assignments before the call.
	tainted := map[*types.Var]bool{}
	for v := range fresh {
		tainted[v] = true
	}
	for range 2 {
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || as.Pos() > call.Pos() {
				return true
			}
			for i, lhs := range as.Lhs {
				rhs := as.Rhs[0]
				if len(as.Rhs) == len(as.Lhs) {
					rhs = as.Rhs[i]
				}
				if id, ok := lhs.(*ast.Ident); ok && mentions(info, rhs, tainted) {
					if v, ok := info.ObjectOf(id).(*types.Var); ok {
						tainted[v] = true
					}
				}
			}
			return true
		})
	}
	for _, arg := range call.Args {
		if mentions(info, arg, tainted) {
			return true
		}
	}
	return false
}

// freshParams returns fn's parameters every call of it in the package passes a random
// value to (none when nothing in the package calls it).
func freshParams(tr *once002.Tracer, fn *effects.Func) map[*types.Var]bool {
	calls := fn.Callers()
	if len(calls) == 0 {
		return nil
	}
	sig := fn.Obj.Signature()
	params := sig.Params()
	out := map[*types.Var]bool{}
	for i := range params.Len() {
		if sig.Variadic() && i == params.Len()-1 {
			break
		}
		all := true
		for _, c := range calls {
			if i >= len(c.Call.Args) {
				all = false
				break
			}
			if src := tr.Source(c.From.Decl.Body, c.Call.Args[i]); src == "" || once002.Clock(src) {
				all = false
				break
			}
		}
		if all {
			out[params.At(i)] = true
		}
	}
	return out
}

// testsClock reports whether fn, before pos, tests the clock in a condition, itself or in
// a function of the package it calls there (two calls deep).
func testsClock(info *types.Info, tr *once002.Tracer, res *effects.Result, fn *effects.Func, pos token.Pos, seen map[*effects.Func]bool) bool {
	return clockBefore(info, tr, res, fn, pos, seen, 0)
}

func clockBefore(info *types.Info, tr *once002.Tracer, res *effects.Result, fn *effects.Func, pos token.Pos, seen map[*effects.Func]bool, depth int) bool {
	if fn == nil || fn.Decl == nil || fn.Decl.Body == nil || seen[fn] || depth > 2 {
		return false
	}
	seen[fn] = true
	body := fn.Decl.Body
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == nil || n.Pos() >= pos {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			found = clock(tr, body, n.Cond)
		case *ast.ForStmt:
			found = n.Cond != nil && clock(tr, body, n.Cond)
		case *ast.SwitchStmt:
			found = n.Tag != nil && clock(tr, body, n.Tag)
		case *ast.CaseClause:
			for _, e := range n.List {
				found = found || clock(tr, body, e)
			}
		case *ast.CallExpr:
			if callee, ok := info.Uses[calleeIdent(n)].(*types.Func); ok {
				found = clockBefore(info, tr, res, res.ByObj[callee], token.Pos(1<<62), seen, depth+1)
			}
		}
		return !found
	})
	return found
}

// clock reports whether a condition is derived from the clock.
func clock(tr *once002.Tracer, body *ast.BlockStmt, cond ast.Expr) bool {
	return once002.Clock(tr.Source(body, cond))
}

// calleeIdent returns the identifier naming a call's function (F, pkg.F, x.M).
func calleeIdent(call *ast.CallExpr) *ast.Ident {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	}
	return nil
}

// mentions reports whether e uses one of vars.
func mentions(info *types.Info, e ast.Expr, vars map[*types.Var]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !found {
			if v, ok := info.Uses[id].(*types.Var); ok && vars[v] {
				found = true
			}
		}
		return !found
	})
	return found
}
