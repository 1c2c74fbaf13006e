package model

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// bypasses finds the direct calls of declared functions, here or in other packages,
// outside generated files and tests (the wrapper's own call, and tests of the body).
func (a *analyzer) bypasses() {
	for _, f := range a.pass.Files {
		if a.isTest(f.Pos()) || ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					fn, ok := typeutil.Callee(a.pass.TypesInfo, call).(*types.Func)
					if !ok {
						return true
					}
					fn = fn.Origin()
					b := &Bypass{Call: call, Callee: fn, Func: fd}
					if d := a.res.Declared[fn]; d != nil {
						if d.Func.Pos() <= call.Pos() && call.Pos() < d.Func.End() {
							return true // a declared function calling itself
						}
						b.Kind, b.Wrapper, b.Decl = string(d.Kind), d.Func.Name.Name+"Once", d.Slash
					} else if fn.Pkg() != a.pass.Pkg {
						if s := a.summaryOf(fn); s != nil && s.Kind != "" {
							b.Kind, b.Wrapper = s.Kind, s.Wrapper
						}
					}
					if b.Kind != "" {
						a.res.Bypasses = append(a.res.Bypasses, b)
					}
					return true
				})
			}
		}
	}
}
