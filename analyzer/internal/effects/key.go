package effects

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
)

// keyCarried reports whether call carries an idempotency key the way its catalogue entry
// says the provider takes one. Where the key's presence cannot be seen from the function
// (the parameters come from the caller or a helper), the call is given the benefit of the
// doubt: a linter that cries wolf gets disabled.
func keyCarried(pass *analysis.Pass, body *ast.BlockStmt, call *ast.CallExpr, e *catalog.Effect) bool {
	k := e.Key
	if k == nil {
		return false
	}
	if names := k.HeaderNames(); len(names) > 0 {
		for _, h := range names {
			if headerSet(pass, body, h) {
				return true
			}
		}
		if optionFromHelper(pass, call) || requestToHelper(pass, body, call, k.Arg) {
			return true
		}
		if k.Field == "" && k.Setter == "" {
			return false
		}
	}
	if k.Arg >= len(call.Args) {
		return false
	}
	return fieldSet(pass, body, call.Args[k.Arg], k.Field, k.Setter)
}

// optionFromHelper reports whether one of the call's options (its variadic arguments,
// as the SDKs take option.WithHeader) is built by a function of the application, which
// may set the header. The request body built by a helper sets no header.
func optionFromHelper(pass *analysis.Pass, call *ast.CallExpr) bool {
	sig, ok := pass.TypesInfo.TypeOf(call.Fun).(*types.Signature)
	if !ok || !sig.Variadic() {
		return false
	}
	for _, arg := range call.Args[min(sig.Params().Len()-1, len(call.Args)):] {
		if c, ok := ast.Unparen(arg).(*ast.CallExpr); ok && inPackage(pass, c) {
			return true
		}
	}
	return false
}

// requestToHelper reports whether the request the call sends (argument arg, a variable)
// is handed to a function of the package in body, which may set the header on it.
func requestToHelper(pass *analysis.Pass, body *ast.BlockStmt, call *ast.CallExpr, arg int) bool {
	if arg >= len(call.Args) {
		return false
	}
	id, ok := ast.Unparen(call.Args[arg]).(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := pass.TypesInfo.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && !found {
			found = handedToHelper(pass, c, v)
		}
		return !found
	})
	return found
}

// handedToHelper reports whether call is a call of a function of the package that is
// given v (or &v, or a part of v).
func handedToHelper(pass *analysis.Pass, call *ast.CallExpr, v *types.Var) bool {
	if !inPackage(pass, call) {
		return false
	}
	for _, arg := range call.Args {
		if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
			arg = u.X
		}
		if rootIs(pass, arg, v) {
			return true
		}
	}
	return false
}

// inPackage reports whether call calls a function of the package being analysed.
func inPackage(pass *analysis.Pass, call *ast.CallExpr) bool {
	fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
	return ok && fn.Pkg() == pass.Pkg
}

// headerSet reports whether body sets the named header: option.WithHeader(name, v),
// req.Header.Set(name, v), req.Header.Add(name, v) or req.Header[name] = v.
func headerSet(pass *analysis.Pass, body *ast.BlockStmt, header string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			name := ""
			switch fun := ast.Unparen(n.Fun).(type) {
			case *ast.SelectorExpr:
				name = fun.Sel.Name
			case *ast.Ident:
				name = fun.Name
			}
			switch name {
			case "WithHeader", "WithHeaderAdd", "Set", "Add":
				if len(n.Args) == 2 && isConstString(pass, n.Args[0], header) {
					found = true
				}
			}
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				if ix, ok := ast.Unparen(lhs).(*ast.IndexExpr); ok && isConstString(pass, ix.Index, header) {
					found = true
				}
			}
		}
		return true
	})
	return found
}

// isConstString reports whether e is a constant equal to s, ignoring case (HTTP header
// names are case-insensitive).
func isConstString(pass *analysis.Pass, e ast.Expr, s string) bool {
	tv, ok := pass.TypesInfo.Types[e]
	return ok && tv.Value != nil && tv.Value.Kind() == constant.String && strings.EqualFold(constant.StringVal(tv.Value), s)
}

// fieldSet reports whether the argument arg carries the key in field (or through setter).
func fieldSet(pass *analysis.Pass, body *ast.BlockStmt, arg ast.Expr, field, setter string) bool {
	arg = ast.Unparen(arg)
	if u, ok := arg.(*ast.UnaryExpr); ok {
		arg = ast.Unparen(u.X)
	}
	switch a := arg.(type) {
	case *ast.CompositeLit:
		return litSets(a, field)
	case *ast.Ident:
		if _, isNil := pass.TypesInfo.Uses[a].(*types.Nil); isNil {
			return false
		}
		obj, ok := pass.TypesInfo.Uses[a].(*types.Var)
		if !ok {
			return true
		}
		if isParam(obj, body) || obj.Parent() == obj.Pkg().Scope() {
			return true // built by the caller or at package level: cannot see
		}
		return varSets(pass, body, obj, field, setter)
	default:
		// Built by a helper or an expression: cannot see.
		return true
	}
}

// litSets reports whether a composite literal sets field, directly or in a nested literal
// (stripe's Params embedded in each XxxParams).
func litSets(lit *ast.CompositeLit, field string) bool {
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if id, ok := kv.Key.(*ast.Ident); ok && id.Name == field {
			return true
		}
		v := ast.Unparen(kv.Value)
		if u, ok := v.(*ast.UnaryExpr); ok {
			v = u.X
		}
		if inner, ok := v.(*ast.CompositeLit); ok && litSets(inner, field) {
			return true
		}
	}
	return false
}

// varSets reports whether body sets field of v, calls its setter, or assigns v a value
// that does; or assigns v from a call, or hands v to a function of the package (a helper
// that may set it).
func varSets(pass *analysis.Pass, body *ast.BlockStmt, v *types.Var, field, setter string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if field != "" && selectsField(pass, lhs, v, field) {
					found = true
				}
				if id, ok := lhs.(*ast.Ident); ok && identIs(pass, id, v) && len(n.Rhs) == len(n.Lhs) {
					if valueSets(n.Rhs[i], field) {
						found = true
					}
				} else if ok && identIs(pass, id, v) && len(n.Rhs) == 1 {
					found = true // v, err := build(...): cannot see
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if identIs(pass, name, v) && i < len(n.Values) && valueSets(n.Values[i], field) {
					found = true
				}
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && setter != "" && sel.Sel.Name == setter && rootIs(pass, sel.X, v) {
				found = true
			}
			found = found || handedToHelper(pass, n, v)
		}
		return true
	})
	return found
}

// valueSets reports whether an assigned value sets field, or comes from a call whose
// result cannot be seen.
func valueSets(e ast.Expr, field string) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	switch e := e.(type) {
	case *ast.CompositeLit:
		return litSets(e, field)
	case *ast.CallExpr:
		return true
	}
	return false
}

// selectsField reports whether e is v.field or v.X.field (at any depth).
func selectsField(pass *analysis.Pass, e ast.Expr, v *types.Var, field string) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == field && rootIs(pass, sel.X, v)
}

// rootIs reports whether the selector chain e starts at v.
func rootIs(pass *analysis.Pass, e ast.Expr, v *types.Var) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			return identIs(pass, x, v)
		default:
			return false
		}
	}
}

func identIs(pass *analysis.Pass, id *ast.Ident, v *types.Var) bool {
	if o := pass.TypesInfo.Uses[id]; o != nil {
		return o == v
	}
	return pass.TypesInfo.Defs[id] == v
}

// isParam reports whether v is declared outside body (a parameter or receiver of the
// function, or a variable of an enclosing scope).
func isParam(v *types.Var, body *ast.BlockStmt) bool {
	return v.Pos() < body.Lbrace || v.Pos() > body.Rbrace
}

// requestMatches reports whether the request argument of call was built in body with one
// of the methods of r.
func requestMatches(pass *analysis.Pass, body *ast.BlockStmt, call *ast.CallExpr, r *catalog.Request) bool {
	if r.Arg >= len(call.Args) {
		return false
	}
	id, ok := ast.Unparen(call.Args[r.Arg]).(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := pass.TypesInfo.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	match := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 || len(as.Lhs) == 0 {
			return true
		}
		lhs, ok := as.Lhs[0].(*ast.Ident)
		if !ok || !identIs(pass, lhs, v) {
			return true
		}
		c, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, ok := typeutil.Callee(pass.TypesInfo, c).(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "net/http" {
			return true
		}
		var method ast.Expr
		switch fn.Name() {
		case "NewRequest":
			if len(c.Args) > 0 {
				method = c.Args[0]
			}
		case "NewRequestWithContext":
			if len(c.Args) > 1 {
				method = c.Args[1]
			}
		}
		if method == nil {
			return true
		}
		if tv, ok := pass.TypesInfo.Types[method]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
			m := strings.ToUpper(constant.StringVal(tv.Value))
			for _, want := range r.Methods {
				if m == want {
					match = true
				}
			}
		}
		return true
	})
	return match
}
