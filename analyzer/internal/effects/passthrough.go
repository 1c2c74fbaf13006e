package effects

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
)

// sendsGiven reports whether each effect fn makes sends only what fn is given: an email
// or a message (through the provider's SDK, or a function of the package), or a raw
// request to a destination fn is given (no path of its own), that takes no key from
// its params; made unconditionally and not in a loop; whose arguments, and the value
// it is called on, are built from fn's parameters, its receiver and constants,
// through the standard library, the provider's own message builders (gomail.NewMessage,
// NewDialer) and the methods of the values so built (SetHeader, MarshalJSON). Such a
// function (an SMTP client's Mail, a webhook's Trigger) decides neither whether nor
// what it sends: its callers do. A helper given the method (a transport, see
// markTransports) is not one: its callers are judged by what they send through it.
func (s *scanner) sendsGiven(fn *Func) bool {
	n := 0
	for _, site := range fn.Sites {
		if !site.decides() {
			continue
		}
		n++
		switch {
		case site.fromCond, site.Class != catalog.Email && site.Class != catalog.Message && site.Class != catalog.HTTP:
			return false
		case site.Effect == nil && s.res.ByObj[site.Callee] == nil:
			return false // another package's function: fn is its user
		case site.Effect != nil && site.Effect.Key != nil && site.Class != catalog.HTTP:
			return false // a key the provider takes is the caller of its SDK's to set
		case !topLevel(fn.Decl.Body, site.Call) || repeated(fn.Decl.Body, site.Call):
			return false
		}
		g := givenCheck{scanner: s, fn: fn, vars: map[*types.Var]bool{}}
		if site.Effect != nil {
			g.provider = site.Callee.Pkg()
		}
		if sel, ok := ast.Unparen(site.Call.Fun).(*ast.SelectorExpr); ok && s.pass.TypesInfo.Selections[sel] != nil && !g.given(sel.X) {
			return false
		}
		for _, a := range site.Call.Args {
			if !g.given(a) {
				return false
			}
		}
		if site.Class == catalog.HTTP && s.ownEndpoint(fn, site) {
			return false // the function knows the endpoint: it decides what is sent
		}
	}
	return n > 0
}

// givenCheck tells whether values of one function's body are built only from what
// the function is given (see sendsGiven).
type givenCheck struct {
	*scanner
	fn       *Func
	provider *types.Package // the provider's package, whose builders count
	// vars holds the verdict on each local variable, true while one is being decided
	// (a value appended to itself is what it was).
	vars map[*types.Var]bool
}

// given reports whether e is built from the function's parameters, receiver and
// constants only.
func (g *givenCheck) given(e ast.Expr) bool {
	info := g.pass.TypesInfo
	e = ast.Unparen(e)
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := e.(type) {
	case nil:
		return true
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		switch obj := info.Uses[x].(type) {
		case *types.Var:
			return g.givenVar(obj)
		case *types.Const, *types.Nil:
			return true
		}
		return false
	case *ast.SelectorExpr:
		if sel := info.Selections[x]; sel != nil {
			return sel.Kind() == types.FieldVal && g.given(x.X)
		}
		// A constant, or a default of the standard library (http.DefaultClient).
		switch obj := info.Uses[x.Sel].(type) {
		case *types.Const:
			return true
		case *types.Var:
			return obj.Pkg() != nil && g.standard(obj.Pkg().Path())
		}
		return false
	case *ast.StarExpr:
		return g.given(x.X)
	case *ast.UnaryExpr:
		return g.given(x.X)
	case *ast.BinaryExpr:
		return g.given(x.X) && g.given(x.Y)
	case *ast.IndexExpr:
		return g.given(x.X) && g.given(x.Index)
	case *ast.SliceExpr:
		return g.given(x.X) && g.given(x.Low) && g.given(x.High) && g.given(x.Max)
	case *ast.TypeAssertExpr:
		return g.given(x.X)
	case *ast.KeyValueExpr:
		return g.given(x.Value)
	case *ast.CompositeLit:
		for _, elt := range x.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				elt = kv.Value
			}
			// A text of its own (Subject: "Upgrade", Op: "OrderCreate") is what the
			// function decides to send, not what it is given.
			if tv := info.Types[elt]; tv.Value != nil && tv.Value.Kind() == constant.String {
				return false
			}
			if !g.given(elt) {
				return false
			}
		}
		return true
	case *ast.CallExpr:
		return g.givenCall(x)
	}
	return false
}

// givenCall reports whether a call builds a value from given ones: a conversion, a
// builtin, a function of the standard library or of the provider's package, or a
// method of a value the function built, each given only given values.
func (g *givenCheck) givenCall(call *ast.CallExpr) bool {
	info := g.pass.TypesInfo
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return len(call.Args) == 1 && g.given(call.Args[0])
	}
	for _, a := range call.Args {
		if tv, ok := info.Types[a]; ok && tv.IsType() {
			continue // make([]T, n), new(T)
		}
		if !g.given(a) {
			return false
		}
	}
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		if _, ok := info.Uses[fun].(*types.Builtin); ok {
			return true
		}
	case *ast.SelectorExpr:
		if sel := info.Selections[fun]; sel != nil {
			// A method of a value built here (mail.SetHeader, pb.MarshalJSON).
			root := rootVar(info, fun.X)
			return sel.Kind() == types.MethodVal && root != nil && declaredIn(root, g.fn.Decl.Body) && g.given(fun.X)
		}
	}
	callee, ok := info.Uses[calleeIdent(call.Fun)].(*types.Func)
	if !ok || callee.Pkg() == nil {
		return false
	}
	return callee.Pkg() == g.provider || g.standard(callee.Pkg().Path())
}

// givenVar reports whether a variable holds only given values: a parameter or the
// receiver, or a local every assignment and range of which, and every method called on
// it with arguments, involves only given values. A package-level variable is state.
func (g *givenCheck) givenVar(v *types.Var) bool {
	body := g.fn.Decl.Body
	if !declaredIn(v, body) {
		return g.isSignatureVar(v)
	}
	if ok, seen := g.vars[v]; seen {
		return ok
	}
	g.vars[v] = true
	ok := true
	info := g.pass.TypesInfo
	ast.Inspect(body, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if rootVar(info, l) != v {
					continue
				}
				rhs := n.Rhs[0]
				if len(n.Rhs) == len(n.Lhs) {
					rhs = n.Rhs[i]
				}
				if !g.given(rhs) || !g.given(indexOf(l)) {
					ok = false
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if info.Defs[name] == v && i < len(n.Values) && !g.given(n.Values[i]) {
					ok = false
				}
			}
		case *ast.RangeStmt:
			if rootVar(info, n.Key) == v || rootVar(info, n.Value) == v {
				ok = g.given(n.X)
			}
		case *ast.CallExpr:
			if sel, isSel := ast.Unparen(n.Fun).(*ast.SelectorExpr); isSel && rootVar(info, sel.X) == v {
				for _, a := range n.Args {
					if !g.given(a) {
						ok = false
					}
				}
			}
		}
		return ok
	})
	g.vars[v] = ok
	return ok
}

// isSignatureVar reports whether v is one of the function's parameters or its receiver.
func (g *givenCheck) isSignatureVar(v *types.Var) bool {
	sig := g.fn.Obj.Signature()
	if r := sig.Recv(); r != nil && r == v {
		return true
	}
	for i := range sig.Params().Len() {
		if sig.Params().At(i) == v {
			return true
		}
	}
	return false
}

// rootVar returns the variable an expression such as x, x.f, x[i] or *x is rooted at.
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			v, _ := info.ObjectOf(x).(*types.Var)
			return v
		case *ast.SelectorExpr:
			if info.Selections[x] == nil {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// indexOf returns the index of an assignment's target x[i], or nil.
func indexOf(e ast.Expr) ast.Expr {
	if ix, ok := ast.Unparen(e).(*ast.IndexExpr); ok {
		return ix.Index
	}
	return nil
}

// calleeIdent returns the identifier naming a called function (F, pkg.F, F[T]).
func calleeIdent(fun ast.Expr) *ast.Ident {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	case *ast.IndexExpr:
		return calleeIdent(f.X)
	case *ast.IndexListExpr:
		return calleeIdent(f.X)
	}
	return nil
}

// standard reports whether an import path is the standard library's: its first element
// has no dot, and it is not of the module being analysed (whose path may have none).
func (s *scanner) standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	own, _, _ := strings.Cut(s.pass.Pkg.Path(), "/")
	if m := s.pass.Module; m != nil && m.Path != "" && (path == m.Path || strings.HasPrefix(path, m.Path+"/")) {
		return false
	}
	return !strings.Contains(first, ".") && first != own
}

// ownEndpoint reports whether a request site's URL names a path of fn's own: the URL
// argument of a provider call, or a string a helper of the package is given that is not
// a method name.
func (s *scanner) ownEndpoint(fn *Func, site *Site) bool {
	t := tracer{pass: s.pass, fn: fn.Decl}
	var urls []ast.Expr
	switch e := site.Effect; {
	case e != nil && e.Request != nil && e.Request.Arg < len(site.Call.Args):
		urls = append(urls, site.Call.Args[e.Request.Arg])
	case e != nil && e.URL != nil && *e.URL < len(site.Call.Args):
		urls = append(urls, site.Call.Args[*e.URL])
	case e == nil:
		for _, a := range site.Call.Args {
			tv := s.pass.TypesInfo.Types[a]
			if tv.Type == nil || !isString(tv.Type) || tv.Value != nil && httpMethods[strings.Trim(tv.Value.ExactString(), "\"")] {
				continue
			}
			urls = append(urls, a)
		}
	}
	for _, u := range urls {
		if ownPath(t.urlParts(u, site.Call.Pos(), 0)) {
			return true
		}
	}
	return false
}

var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}
