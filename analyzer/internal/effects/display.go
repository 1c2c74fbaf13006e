package effects

import (
	"go/ast"
	"go/types"
	"strings"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
)

// Qualifier prints a package by its name, as Go code refers to it.
func Qualifier(p *types.Package) string { return p.Name() }

// DisplayName names the callee of call as messages print it: package-qualified by name,
// and through the fields the call went through, so a call of client.V1Refunds.Create on
// a *stripe.Client reads "(*stripe.Client).V1Refunds.Create" rather than naming the SDK's
// unexported service type.
func DisplayName(info *types.Info, call *ast.CallExpr, fn *types.Func) string {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if ok && fn.Signature().Recv() != nil && fn.Pkg() != nil {
		sdk := catalog.Module(fn.Pkg().Path())
		var fields []string
		x := ast.Unparen(sel.X)
		for {
			s, ok := x.(*ast.SelectorExpr)
			if !ok {
				break
			}
			selection, ok := info.Selections[s]
			if !ok || selection.Kind() != types.FieldVal || !typeFrom(info.TypeOf(s.X), sdk) {
				break
			}
			fields = append(fields, s.Sel.Name)
			x = ast.Unparen(s.X)
		}
		if len(fields) > 0 {
			for i, j := 0, len(fields)-1; i < j; i, j = i+1, j-1 {
				fields[i], fields[j] = fields[j], fields[i]
			}
			return "(" + types.TypeString(info.TypeOf(x), Qualifier) + ")." + strings.Join(fields, ".") + "." + fn.Name()
		}
	}
	return FuncName(fn)
}

// FuncName names a function package-qualified by name: "charge.New",
// "(*sesv2.Client).SendEmail".
func FuncName(fn *types.Func) string {
	if recv := fn.Signature().Recv(); recv != nil {
		return "(" + types.TypeString(recv.Type(), Qualifier) + ")." + fn.Name()
	}
	if fn.Pkg() == nil {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// typeFrom reports whether t (or what it points to) is a named type of the module.
func typeFrom(t types.Type, module string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && catalog.Module(n.Obj().Pkg().Path()) == module
}
