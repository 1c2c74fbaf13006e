package effects

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/types/typeutil"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// relay reports whether fn is a request handler that hands its request to a model and
// keeps nothing: an HTTP handler (see handlerShape) that nothing in the module calls,
// every effect of which is a model call made while the request waits (no goroutine on
// the way, no closure handed out), and which writes no row, itself or through what it
// calls (no INSERT, UPDATE or DELETE, and no call outside the standard library of a
// function named for a store: addMessage, updateTask, a cache's Set). The answer goes
// back to whoever asked and nothing is kept twice: a repeated request is a new question,
// whose retries the requester owns as it does a GET's. A handler that stores the answer,
// answers later, sends a message or charges is judged as usual.
func (s *scanner) relay(fn *Func, calledElsewhere bool) bool {
	if fn.Test || len(fn.callers) > 0 || len(fn.handedCallers) > 0 || calledElsewhere || !handlerShape(fn.Obj) {
		return false
	}
	c := s.classes[fn]
	if len(c) != 1 || !c[catalog.Model] {
		return false
	}
	handsOut := map[*Func]bool{} // functions that hand a closure calling the package's functions out
	for _, g := range s.res.Funcs {
		for _, e := range g.handedCallers {
			handsOut[e.from] = true
		}
	}
	seen := map[*Func]bool{}
	var keeps func(f *Func) bool
	keeps = func(f *Func) bool {
		if seen[f] {
			return false
		}
		seen[f] = true
		for _, op := range f.SQL {
			switch op.Stmt.Kind {
			case sqltext.Insert, sqltext.Update, sqltext.Delete:
				return true
			}
		}
		if s.callsStore(f) || handsOut[f] {
			return true
		}
		for _, e := range f.calls {
			if !e.inert && (s.inGoroutine(f, e.call) || keeps(e.to)) {
				return true
			}
		}
		for _, site := range f.Sites {
			if site.Unguarded() && s.inGoroutine(f, site.Call) {
				return true
			}
		}
		return false
	}
	return !keeps(fn)
}

// callsStore reports whether f's body calls a function or method outside the standard
// library whose name says it keeps something (catalog.StoreName): another package's of the
// module, one through an interface (a.store.SaveAnswer), or a client's (a cache's Set, a
// document store's InsertOne). The package's own functions are read in turn instead: a
// buffer's AddData keeps nothing past the request.
func (s *scanner) callsStore(f *Func) bool {
	found := false
	ast.Inspect(f.Decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		callee, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
		if !ok || callee.Pkg() == nil || s.standard(callee.Pkg().Path()) {
			return true
		}
		if callee.Pkg() == s.pass.Pkg && !isAbstract(callee) {
			return true // the package's own function: its body is read in turn
		}
		found = catalog.StoreName(callee.Name())
		return !found
	})
	return found
}

// inGoroutine reports whether call is made in a go statement of f's body, or in a
// function literal one starts: it runs after the request may have been answered.
func (s *scanner) inGoroutine(f *Func, call *ast.CallExpr) bool {
	path, _ := astutil.PathEnclosingInterval(f.File, call.Pos(), call.End())
	for _, n := range path {
		if n == f.Decl.Body {
			return false
		}
		if _, ok := n.(*ast.GoStmt); ok {
			return true
		}
	}
	return false
}

// handlerShape reports whether fn has the shape of an HTTP handler: net/http's
// (http.ResponseWriter, *http.Request), a single gin, echo or fiber context, or a method
// with no parameters or results of a type embedding a beego controller.
func handlerShape(fn *types.Func) bool {
	sig := fn.Signature()
	params := sig.Params()
	switch params.Len() {
	case 2:
		return namedIn(params.At(0).Type(), "net/http", "ResponseWriter") && isHTTPRequest(params.At(1).Type())
	case 1:
		t := params.At(0).Type()
		return namedIn(t, "github.com/gin-gonic/gin", "Context") || namedIn(t, "github.com/labstack/echo", "Context") ||
			namedIn(t, "github.com/gofiber/fiber", "Ctx")
	case 0:
		t := recvBase(fn)
		if t == nil || sig.Results().Len() > 0 {
			return false
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return false
		}
		for i := range st.NumFields() {
			f := st.Field(i)
			if f.Embedded() && (namedIn(f.Type(), "github.com/beego/beego", "Controller") || namedIn(f.Type(), "github.com/astaxie/beego", "Controller")) {
				return true
			}
		}
	}
	return false
}
