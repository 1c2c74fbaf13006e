package effects

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// method is what the HTTP method of a request is known to be at a call: a method, or the
// parameter of the function that decides it (the method string, or the request itself),
// or nothing known.
type method struct {
	name  string // the method, in upper case, when known
	param int    // the index of the parameter that decides it, or -1
}

var unknownMethod = method{param: -1}

// tracer follows a value back through the assignments of one function body: the method
// a request is sent with, and the constant parts of its URL.
type tracer struct {
	pass *analysis.Pass
	fn   *ast.FuncDecl
}

// methodOf returns the method of e at pos: a method string or an *http.Request. A request
// variable is followed to its last assignment before pos (so a request reused for a GET
// is a GET) and to the Method set on it since; http.NewRequest(WithContext)'s method
// argument, an http.Request literal's Method field (none is GET), a constant and
// req.WithContext or req.Clone are read through.
func (t tracer) methodOf(e ast.Expr, pos token.Pos, depth int) method {
	if depth > 8 {
		return unknownMethod
	}
	e = ast.Unparen(e)
	if tv, ok := t.pass.TypesInfo.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		m := strings.ToUpper(constant.StringVal(tv.Value))
		if m == "" {
			m = "GET"
		}
		return method{name: m, param: -1}
	}
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return t.methodOf(x.X, pos, depth+1)
		}
	case *ast.CompositeLit:
		if !isHTTPRequest(t.pass.TypesInfo.TypeOf(x)) {
			return unknownMethod
		}
		for _, elt := range x.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Method" {
					return t.methodOf(kv.Value, pos, depth+1)
				}
			}
		}
		return method{name: "GET", param: -1}
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(t.pass.TypesInfo, x).(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "net/http" {
			return unknownMethod
		}
		switch fn.Name() {
		case "NewRequest":
			if fn.Signature().Recv() == nil && len(x.Args) > 0 {
				return t.methodOf(x.Args[0], pos, depth+1)
			}
		case "NewRequestWithContext":
			if fn.Signature().Recv() == nil && len(x.Args) > 1 {
				return t.methodOf(x.Args[1], pos, depth+1)
			}
		case "WithContext", "Clone":
			if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok && fn.Signature().Recv() != nil {
				return t.methodOf(sel.X, pos, depth+1)
			}
		}
	case *ast.Ident:
		v, ok := t.pass.TypesInfo.Uses[x].(*types.Var)
		if !ok {
			return unknownMethod
		}
		if i := t.paramIndex(v); i >= 0 {
			if m, ok := t.lastMethodSet(v, pos, depth); ok {
				return m
			}
			return method{param: i}
		}
		if !declaredIn(v, t.fn.Body) {
			return unknownMethod
		}
		if m, ok := t.lastMethodSet(v, pos, depth); ok {
			return m
		}
		if rhs, at := t.lastAssign(v, pos); rhs != nil {
			return t.methodOf(rhs, at, depth+1)
		}
	}
	return unknownMethod
}

// lastMethodSet returns the method given by the last v.Method = m before pos that follows
// v's last assignment.
func (t tracer) lastMethodSet(v *types.Var, pos token.Pos, depth int) (method, bool) {
	_, assigned := t.lastAssign(v, pos)
	var best *ast.AssignStmt
	ast.Inspect(t.fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.End() > pos || as.Pos() < assigned || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		if sel, ok := ast.Unparen(as.Lhs[0]).(*ast.SelectorExpr); ok && sel.Sel.Name == "Method" && rootIs(t.pass, sel.X, v) {
			if best == nil || as.Pos() > best.Pos() {
				best = as
			}
		}
		return true
	})
	if best == nil {
		return method{}, false
	}
	return t.methodOf(best.Rhs[0], best.Pos(), depth+1), true
}

// lastAssign returns the value of the last assignment to v that ends before pos, and
// where it is; or nil. A value assigned from a call with several results is the call.
func (t tracer) lastAssign(v *types.Var, pos token.Pos) (ast.Expr, token.Pos) {
	var best ast.Expr
	var at token.Pos
	consider := func(n ast.Node, lhs []*ast.Ident, rhs []ast.Expr) {
		if n.End() > pos || n.Pos() < at {
			return
		}
		for i, id := range lhs {
			if id == nil || !identIs(t.pass, id, v) {
				continue
			}
			switch {
			case len(rhs) == len(lhs):
				best, at = rhs[i], n.Pos()
			case len(rhs) == 1 && i == 0:
				best, at = rhs[0], n.Pos()
			}
		}
	}
	ast.Inspect(t.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			ids := make([]*ast.Ident, len(n.Lhs))
			for i, l := range n.Lhs {
				ids[i], _ = ast.Unparen(l).(*ast.Ident)
			}
			consider(n, ids, n.Rhs)
		case *ast.ValueSpec:
			consider(n, n.Names, n.Values)
		}
		return true
	})
	return best, at
}

// paramIndex returns the index of v among the function's parameters, or -1.
func (t tracer) paramIndex(v *types.Var) int {
	i := 0
	for _, field := range t.fn.Type.Params.List {
		if len(field.Names) == 0 {
			i++
			continue
		}
		for _, name := range field.Names {
			if t.pass.TypesInfo.Defs[name] == v {
				return i
			}
			i++
		}
	}
	return -1
}

// urlParts returns the constant parts of the URL a request is sent to (e, a URL string or
// an *http.Request), in order, and whether the first part is the URL's start.
func (t tracer) urlParts(e ast.Expr, pos token.Pos, depth int) ([]string, bool) {
	if depth > 8 {
		return nil, false
	}
	e = ast.Unparen(e)
	if tv, ok := t.pass.TypesInfo.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return []string{constant.StringVal(tv.Value)}, true
	}
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return nil, false
		}
		l, lead := t.urlParts(x.X, pos, depth+1)
		r, _ := t.urlParts(x.Y, pos, depth+1)
		return append(l, r...), lead
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return t.urlParts(x.X, pos, depth+1)
		}
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(t.pass.TypesInfo, x).(*types.Func)
		if !ok || fn.Pkg() == nil {
			return nil, false
		}
		switch path, name := fn.Pkg().Path(), fn.Name(); {
		case path == "net/http" && name == "NewRequest" && len(x.Args) > 1:
			return t.urlParts(x.Args[1], pos, depth+1)
		case path == "net/http" && name == "NewRequestWithContext" && len(x.Args) > 2:
			return t.urlParts(x.Args[2], pos, depth+1)
		case path == "net/http" && (name == "WithContext" || name == "Clone"):
			if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok {
				return t.urlParts(sel.X, pos, depth+1)
			}
		case path == "fmt" && name == "Sprintf" && len(x.Args) > 0:
			if tv, ok := t.pass.TypesInfo.Types[x.Args[0]]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
				format := constant.StringVal(tv.Value)
				var parts []string
				for _, p := range strings.Split(format, "%") {
					// Drop the verb letter each part after the first starts with.
					parts = append(parts, p)
				}
				for i := 1; i < len(parts); i++ {
					if parts[i] != "" {
						parts[i] = parts[i][1:]
					}
				}
				return parts, !strings.HasPrefix(format, "%")
			}
		case path == "net/url" && name == "JoinPath" && len(x.Args) > 0:
			var parts []string
			for _, a := range x.Args {
				p, _ := t.urlParts(a, pos, depth+1)
				parts = append(parts, strings.Join(p, ""))
			}
			return []string{strings.Join(parts, "/")}, false
		}
	case *ast.Ident:
		v, ok := t.pass.TypesInfo.Uses[x].(*types.Var)
		if !ok || !declaredIn(v, t.fn.Body) {
			return nil, false
		}
		if rhs, at := t.lastAssign(v, pos); rhs != nil {
			return t.urlParts(rhs, at, depth+1)
		}
	}
	return nil, false
}

// urlParam returns the index of the parameter the URL of a request (e, a URL string or
// an *http.Request) is built from, or -1: the parameter itself, or a value made from it
// (concatenated, formatted, joined) in the function's body. A URL built only from the
// receiver's fields and constants is the function's own.
func (t tracer) urlParam(e ast.Expr, pos token.Pos, depth int) int {
	if depth > 8 {
		return -1
	}
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return -1
		}
		if p := t.urlParam(x.X, pos, depth+1); p >= 0 {
			return p
		}
		return t.urlParam(x.Y, pos, depth+1)
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return t.urlParam(x.X, pos, depth+1)
		}
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(t.pass.TypesInfo, x).(*types.Func)
		if !ok || fn.Pkg() == nil {
			return -1
		}
		var args []ast.Expr
		switch path, name := fn.Pkg().Path(), fn.Name(); {
		case path == "net/http" && name == "NewRequest" && len(x.Args) > 1:
			args = x.Args[1:2]
		case path == "net/http" && name == "NewRequestWithContext" && len(x.Args) > 2:
			args = x.Args[2:3]
		case path == "net/http" && (name == "WithContext" || name == "Clone"):
			if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok {
				args = []ast.Expr{sel.X}
			}
		case path == "fmt" && name == "Sprintf" && len(x.Args) > 1:
			args = x.Args[1:]
		case path == "net/url" && name == "JoinPath":
			args = x.Args
		case path == "strings" && (name == "TrimLeft" || name == "TrimPrefix" || name == "TrimSpace" || name == "TrimRight" || name == "TrimSuffix") && len(x.Args) > 0:
			args = x.Args[:1]
		}
		for _, a := range args {
			if p := t.urlParam(a, pos, depth+1); p >= 0 {
				return p
			}
		}
	case *ast.Ident:
		v, ok := t.pass.TypesInfo.Uses[x].(*types.Var)
		if !ok {
			return -1
		}
		if i := t.paramIndex(v); i >= 0 {
			if _, ok := t.lastMethodSet(v, pos, depth); ok || !isString(v.Type()) && !isHTTPRequest(v.Type()) {
				return -1
			}
			return i
		}
		if !declaredIn(v, t.fn.Body) {
			return -1
		}
		if rhs, at := t.lastAssign(v, pos); rhs != nil {
			return t.urlParam(rhs, at, depth+1)
		}
	}
	return -1
}

// forwarded reports whether e is only what the function is given: a parameter, the
// receiver, a constant, a package-level value, a field of one of those, or a value built
// from them by literals, operators, conversions and builtins (make, len, append), through
// the function's own variables. A call of anything else makes something new.
func (t tracer) forwarded(e ast.Expr, pos token.Pos, depth int) bool {
	if depth > 8 {
		return false
	}
	e = ast.Unparen(e)
	info := t.pass.TypesInfo
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		switch obj := info.Uses[x].(type) {
		case *types.Var:
			if !declaredIn(obj, t.fn.Body) {
				return true // a parameter, the receiver or a package-level variable
			}
			rhs, at := t.lastAssign(obj, pos)
			return rhs != nil && t.forwarded(rhs, at, depth+1)
		case *types.Const, *types.Nil:
			return true
		}
		return x.Name == "nil" || x.Name == "true" || x.Name == "false"
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if _, ok := info.Uses[id].(*types.PkgName); ok {
				_, isVar := info.Uses[x.Sel].(*types.Var)
				_, isConst := info.Uses[x.Sel].(*types.Const)
				return isVar || isConst
			}
		}
		return t.forwarded(x.X, pos, depth+1)
	case *ast.StarExpr:
		return t.forwarded(x.X, pos, depth+1)
	case *ast.UnaryExpr:
		return t.forwarded(x.X, pos, depth+1)
	case *ast.BinaryExpr:
		return t.forwarded(x.X, pos, depth+1) && t.forwarded(x.Y, pos, depth+1)
	case *ast.IndexExpr:
		return t.forwarded(x.X, pos, depth+1) && t.forwarded(x.Index, pos, depth+1)
	case *ast.CompositeLit:
		for _, elt := range x.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				elt = kv.Value
			}
			if !t.forwarded(elt, pos, depth+1) {
				return false
			}
		}
		return true
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() {
			return len(x.Args) == 1 && t.forwarded(x.Args[0], pos, depth+1)
		}
		id, ok := ast.Unparen(x.Fun).(*ast.Ident)
		if !ok {
			return false
		}
		b, ok := info.Uses[id].(*types.Builtin)
		if !ok || (b.Name() != "make" && b.Name() != "len" && b.Name() != "append" && b.Name() != "cap") {
			return false
		}
		for _, a := range x.Args {
			if tv, ok := info.Types[a]; ok && tv.IsType() {
				continue
			}
			if !t.forwarded(a, pos, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// isString reports whether t's underlying type is string.
func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// declaredIn reports whether v is declared inside body.
func declaredIn(v *types.Var, body *ast.BlockStmt) bool {
	return v.Pos() >= body.Lbrace && v.Pos() <= body.Rbrace
}

// isHTTPRequest reports whether t is net/http.Request or a pointer to it.
func isHTTPRequest(t types.Type) bool { return namedIn(t, "net/http", "Request") }

// namedIn reports whether t, or what it points to, is the named type name of a package
// whose path is path or begins with path+"/" (a major version or a subpackage:
// github.com/labstack/echo/v4, github.com/beego/beego/v2/server/web).
func namedIn(t types.Type, path, name string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Name() != name {
		return false
	}
	p := n.Obj().Pkg().Path()
	return p == path || strings.HasPrefix(p, path+"/")
}
